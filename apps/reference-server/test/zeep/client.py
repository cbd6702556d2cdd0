"""zeep, the second SOAP client of the interop suites (test/zeep.test.ts runs this file).

    python3 client.py load <base_url>
    python3 client.py call <base_url> <service> <auth> <operation> <json arguments>

service: customer | price. auth: none, text:<user>:<password> or digest:<user>:<password>
(a WS-Security UsernameToken, PasswordText or PasswordDigest), must:<user>:<password> (a text
token in a wsse:Security block marked mustUnderstand), header:<user>:<password> (the
Authentication header block the WSDL declares), unknown-must:<user>:<password> (a text token
plus a mustUnderstand block nobody understands). No HTTP credentials are ever sent.

Prints one JSON object: the result (integers and decimals as strings, so 64-bit values survive
JSON.parse), or the fault; the envelope sent; and every warning Python or zeep's loggers raised.
"""

import json
import logging
import sys
import warnings
from decimal import Decimal

import requests
from lxml import etree
from zeep import Client, Settings
from zeep.exceptions import Fault
from zeep.helpers import serialize_object
from zeep.plugins import HistoryPlugin
from zeep.transports import Transport
from zeep.wsse.username import UsernameToken

SOAP12 = "http://www.w3.org/2003/05/soap-envelope"
WSSE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
PATHS = {"customer": "/ws/customer", "price": "/ws/PriceService"}


class Warnings(logging.Handler):
    """Collects what zeep logs at WARNING and above (it logs some schema problems, not warns)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(f"{record.name}: {record.getMessage()}")


class MustUnderstandToken(UsernameToken):
    """A UsernameToken whose wsse:Security block is marked env:mustUnderstand (SOAP 1.2 Part 1 §5.2.3)."""

    def apply(self, envelope, headers):
        envelope, headers = super().apply(envelope, headers)
        security = envelope.find(f"{{{SOAP12}}}Header/{{{WSSE}}}Security")
        security.set(f"{{{SOAP12}}}mustUnderstand", "true")
        return envelope, headers


def client_for(base_url, service, wsse=None, plugins=()):
    session = requests.Session()
    session.trust_env = False  # no proxies, no .netrc credentials: only what this file sends
    transport = Transport(session=session, timeout=20, operation_timeout=20)
    # strict=True is zeep's default; said here because the suite depends on it.
    settings = Settings(strict=True, raw_response=False)
    return Client(
        f"{base_url}{PATHS[service]}?wsdl",
        transport=transport,
        settings=settings,
        wsse=wsse,
        plugins=list(plugins),
    )


def plain(value):
    """JSON-safe: ints and Decimals as strings, lxml elements as text."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, etree._Element):
        return etree.tostring(value, encoding="unicode")
    return str(value)


def load(base_url):
    out = {}
    for service in PATHS:
        client = client_for(base_url, service)
        binding = client.service._binding
        operations = {}
        for name, operation in binding._operations.items():
            header = operation.input.header
            operations[name] = {
                "action": operation.soapaction,
                "headers": [str(element.qname) for _, element in header.type.elements],
                "oneWay": operation.output is None or operation.output.body is None,
            }
        out[service] = {"binding": type(binding).__name__, "operations": operations}
    return out


def call(base_url, service, auth, operation, arguments):
    kind, _, credentials = auth.partition(":")
    user, _, password = credentials.partition(":")
    extra = {}
    wsse = None
    if kind in ("text", "digest"):
        wsse = UsernameToken(user, password, use_digest=kind == "digest")
    elif kind in ("must", "unknown-must"):
        wsse = MustUnderstandToken(user, password)
    elif kind != "none" and kind != "header":
        raise SystemExit(f"unknown auth {auth!r}")
    history = HistoryPlugin()
    client = client_for(base_url, service, wsse=wsse, plugins=[history])
    if kind == "header":
        # By the part name of the soap12:header the binding declares: zeep only takes a dict
        # here when the WSDL declares the header, and builds the element from its schema.
        extra["_soapheaders"] = {"parameters": {"Username": user, "Password": password}}
    elif kind == "unknown-must":
        trace = etree.Element("{urn:example:trace}Trace", nsmap={"t": "urn:example:trace"})
        trace.set(f"{{{SOAP12}}}mustUnderstand", "true")
        trace.text = "1"
        extra["_soapheaders"] = [trace]
    result = fault = None
    try:
        result = plain(serialize_object(getattr(client.service, operation)(**arguments, **extra), dict))
    except Fault as err:
        fault = {
            "code": err.code,
            "subcodes": [str(code) for code in (err.subcodes or [])],
            "message": err.message,
            "detail": plain(err.detail),
        }
    sent = history.last_sent
    return {
        "result": result,
        "fault": fault,
        "sent": etree.tostring(sent["envelope"], encoding="unicode") if sent else None,
        "httpHeaders": {k.lower(): v for k, v in (sent["http_headers"] if sent else {}).items()},
    }


def main(argv):
    captured = Warnings()
    logging.getLogger().addHandler(captured)
    logging.getLogger().setLevel(logging.WARNING)
    with warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always")
        if argv[1] == "load":
            out = load(argv[2])
        elif argv[1] == "call":
            out = call(argv[2], argv[3], argv[4], argv[5], json.loads(argv[6]))
        else:
            raise SystemExit(f"unknown command {argv[1]!r}")
    out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in raised] + captured.messages
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)

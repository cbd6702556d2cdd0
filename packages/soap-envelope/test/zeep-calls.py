"""Calls SOAP operations with zeep, as a team would: zeep.Client(wsdl_url).service.<operation>(...).

Reads a JSON list of calls on stdin, each {"wsdl": url, "address": the endpoint, "operation": name,
"input": value}, and
prints a JSON list of outcomes, one per call and in the same order: {"result": the whole output
element as zeep parses it, dates and durations in ISO 8601, binary in base64, the g* types as
zeep's tuples} or {"error": "ExceptionType: message"}. The input's literals are
{"$xsd": built-in, "lexical": literal}; those zeep only accepts as Python values (binary,
durations, the g* types) are turned into zeep's own value for that type.
"""

import base64
import datetime
import decimal
import json
import os
import sys

import isodate
import zeep
from zeep.helpers import serialize_object
from zeep.plugins import HistoryPlugin
from zeep.transports import Transport
from zeep.wsdl.bindings.soap import SoapBinding
from zeep.wsdl.messages.soap import RpcMessage
from zeep.xsd.types import builtins

BUILTINS = {qname.localname: zeep_type for qname, zeep_type in builtins.default_types.items()}
AS_PYTHON = {"base64Binary", "duration", "gYear", "gYearMonth", "gMonthDay", "gDay", "gMonth"}


def python_value(value):
    if isinstance(value, list):
        return [python_value(v) for v in value]
    if isinstance(value, dict):
        if "$xsd" in value:
            if value["$xsd"] in AS_PYTHON:
                return BUILTINS[value["$xsd"]].pythonvalue(value["lexical"])
            return value["lexical"]
        return {k: python_value(v) for k, v in value.items()}
    return value


def to_json(value):
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (datetime.timedelta, isodate.Duration)):
        return isodate.duration_isoformat(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def soap_service(client, address):
    """The first port bound with SOAP, at the address given.

    client.service is the first port, which may be an HTTP GET/POST one; and a port's address
    counts only in its binding's SOAP version (a soap:binding port with a soap12:address has none
    for zeep).
    """
    for service in client.wsdl.services.values():
        for port in service.ports.values():
            if isinstance(port.binding, SoapBinding):
                return client.create_service(port.binding.name, address)
    raise LookupError("no port bound with SOAP")


class LocalSoapEncoding(Transport):
    """zeep fetches the SOAP 1.1 encoding's schema from its namespace URI when a schema imports
    it without schemaLocation; here it is the corpus's copy, so no call needs the network."""

    def load(self, url):
        if url.rstrip("/") == SOAP_ENC.rstrip("/"):
            with open(SOAP_ENC_XSD, "rb") as f:
                return f.read()
        return super().load(url)


SOAP_ENC = "http://schemas.xmlsoap.org/soap/encoding/"
SOAP_ENC_XSD = os.path.join(os.path.dirname(__file__), "corpus", "zeep", "soap-enc.xsd")


def call(spec):
    history = HistoryPlugin()
    client = zeep.Client(spec["wsdl"], plugins=[history], transport=LocalSoapEncoding())
    service = soap_service(client, spec["address"])
    operation = getattr(service, spec["operation"])
    value = python_value(spec["input"])
    if isinstance(value, dict):
        operation(**value)
    else:
        operation(value)
    # The reply as zeep parsed it, whole: the service call above returns it unwrapped when the
    # output element has a single child.
    body = history.last_received["envelope"].find("{*}Body")
    element = body[0]
    output = service._binding.get(spec["operation"]).output
    # An rpc wrapper is no element of the schema: the binding's message declares it (WSDL 1.1 §3.5).
    declared = output.body if isinstance(output, RpcMessage) else client.get_element(element.tag)
    # An empty output message declares no wrapper for zeep: nothing to parse.
    parsed = None if declared is None else declared.parse(element, client.wsdl.types)
    return serialize_object(parsed)


def main():
    outcomes = []
    for spec in json.load(sys.stdin):
        try:
            outcomes.append({"result": call(spec)})
        except Exception as err:  # every failure is an outcome the test asserts on
            outcomes.append({"error": f"{type(err).__name__}: {err}"})
    print(json.dumps(outcomes, default=to_json))


main()

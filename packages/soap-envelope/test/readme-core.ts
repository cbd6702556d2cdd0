import { createServer } from "node:http";
import { HttpError } from "@svc/errors";
import { settleUnreadBody } from "@svc/kernel/node";
import { createSoapService } from "@svc/soap-envelope";

const NS = "urn:example:greeter";
// A WSDL 1.1 contract, SOAP 1.2 binding, document/literal; a file path works as well.
const wsdl = `<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
    xmlns:tns="${NS}" targetNamespace="${NS}">
  <wsdl:types>
    <xs:schema targetNamespace="${NS}" elementFormDefault="qualified">
      <xs:element name="greet"><xs:complexType><xs:sequence>
        <xs:element name="name" type="xs:string"/>
      </xs:sequence></xs:complexType></xs:element>
      <xs:element name="greetResponse"><xs:complexType><xs:sequence>
        <xs:element name="greeting" type="xs:string"/>
      </xs:sequence></xs:complexType></xs:element>
    </xs:schema>
  </wsdl:types>
  <wsdl:message name="greet"><wsdl:part name="parameters" element="tns:greet"/></wsdl:message>
  <wsdl:message name="greetResponse"><wsdl:part name="parameters" element="tns:greetResponse"/></wsdl:message>
  <wsdl:portType name="Greeter">
    <wsdl:operation name="greet">
      <wsdl:input message="tns:greet"/><wsdl:output message="tns:greetResponse"/>
    </wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="GreeterSoap12" type="tns:Greeter">
    <soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="greet">
      <soap12:operation soapAction="${NS}#greet"/>
      <wsdl:input><soap12:body use="literal"/></wsdl:input>
      <wsdl:output><soap12:body use="literal"/></wsdl:output>
    </wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="GreeterService">
    <wsdl:port name="GreeterPort" binding="tns:GreeterSoap12">
      <soap12:address location="http://localhost/greeter"/>
    </wsdl:port>
  </wsdl:service>
</wsdl:definitions>`;

// Compiled once: the contract, the schema's validators and serializers, the options.
const service = createSoapService({
  wsdl,
  handlers: { greet: ({ name }: { name: string }) => ({ greeting: `Hello, ${name}` }) },
});

export const server = createServer(async (req, res) => {
  const answer =
    req.method === "POST"
      ? await service.handle({
          method: req.method,
          contentType: req.headers["content-type"],
          contentLength: req.headers["content-length"],
          contentEncoding: req.headers["content-encoding"],
          ifMatch: req.headers["if-match"], // RFC 9110 §13.1: evaluated before the body is read
          ifNoneMatch: req.headers["if-none-match"],
          body: req, // streamed into the parser, with the size limits applied as it arrives
          http: req, // its Host field lines are checked first (RFC 9112 §3.2: 400 when invalid)
        })
      : // SOAP 1.2 Part 2 §7: requests are POSTs; RFC 9110 §15.5.6: a 405 names them in Allow.
        service.errorResponse(HttpError.methodNotAllowed(["POST"], `${req.method} is not allowed`));
  // Refused before the whole body was read (413, 415): the kernel's refused-body policy (a small
  // rest discarded within 1 s, a large one closes the connection).
  if (answer.unreadBody) settleUnreadBody(req, res);
  res.writeHead(answer.status, answer.headers).end(answer.body);
});

import { errorHandler } from "@svc/errors/express";
import { SoapFault, soapFaults } from "@svc/soap-envelope";
import { soapEndpoint } from "@svc/soap-envelope/express";
import express from "express";

const NS = "urn:example:greeter";
// The same contract bound with SOAP 1.1 (soap:binding, WSDL 1.1 §3), as most existing WSDLs are.
const wsdl = `<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
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
  <wsdl:binding name="GreeterSoap11" type="tns:Greeter">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="greet">
      <soap:operation soapAction="${NS}#greet"/>
      <wsdl:input><soap:body use="literal"/></wsdl:input>
      <wsdl:output><soap:body use="literal"/></wsdl:output>
    </wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="GreeterService">
    <wsdl:port name="GreeterPort" binding="tns:GreeterSoap11">
      <soap:address location="http://localhost/greeter"/>
    </wsdl:port>
  </wsdl:service>
</wsdl:definitions>`;

export const app = express();
app.disable("x-powered-by"); // no framework banner on every response
app.use(
  "/greeter",
  soapEndpoint({
    wsdl,
    handlers: {
      greet: ({ name }: { name: string }, ctx) => {
        // A Sender fault is a SOAP 1.1 Client fault with HTTP 500 (SOAP 1.1 §4.4.1, §6.2).
        if (name === "") throw new SoapFault({ code: "Sender", reason: "Whom shall I greet?" });
        // ctx.soapVersion is "1.1"; ctx.action the SOAPAction's URI, without its quotes.
        return { greeting: `Hello, ${name} (SOAP ${ctx.soapVersion})` };
      },
    },
  }),
);
app.use(errorHandler({ renderers: [soapFaults({ path: "/greeter" })] }));

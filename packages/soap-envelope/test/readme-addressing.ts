import { errorHandler } from "@svc/errors/express";
import { soapFaults } from "@svc/soap-envelope";
import { soapEndpoint } from "@svc/soap-envelope/express";
import express from "express";

const NS = "urn:example:greeter";
// The greeter contract as WCF and CXF publish one: a wsam:Action on each message (Metadata §4.4.1)
// and WS-Addressing required on the binding (wsaw:UsingAddressing wsdl:required="true").
const wsdl = `<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
    xmlns:wsam="http://www.w3.org/2007/05/addressing/metadata"
    xmlns:wsaw="http://www.w3.org/2006/05/addressing/wsdl"
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
      <wsdl:input message="tns:greet" wsam:Action="${NS}:Greeter:greet"/>
      <wsdl:output message="tns:greetResponse" wsam:Action="${NS}:Greeter:greetResponse"/>
    </wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="GreeterSoap12" type="tns:Greeter">
    <wsaw:UsingAddressing wsdl:required="true"/>
    <soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="greet">
      <soap12:operation soapAction="${NS}:Greeter:greet"/>
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

export const app = express();
app.disable("x-powered-by"); // no framework banner on every response
app.use(
  "/greeter",
  soapEndpoint({
    wsdl,
    handlers: {
      // Routed by wsa:Action; the reply gets wsa:Action (the output's), wsa:MessageID and
      // wsa:RelatesTo (the request's wsa:MessageID) without the handler doing anything.
      greet: ({ name }: { name: string }, ctx) => ({
        greeting: `Hello, ${name} (message ${ctx.addressing?.messageId ?? "without an id"})`,
      }),
    },
  }),
);
app.use(errorHandler({ renderers: [soapFaults({ path: "/greeter" })] }));

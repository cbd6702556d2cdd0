// The schema body (inside xs:schema) of the decoder and encoder tests: every supported facet,
// group kind, attribute and simple content, over the target namespace prefix `t`.
export const ITEM_SCHEMA_BODY = `
  <xs:simpleType name="Code"><xs:restriction base="xs:string"><xs:pattern value="[A-Z]{3}"/><xs:pattern value="X\\d"/></xs:restriction></xs:simpleType>
  <xs:simpleType name="Short"><xs:restriction base="t:Code"><xs:length value="3"/></xs:restriction></xs:simpleType>
  <xs:simpleType name="Color"><xs:restriction base="xs:string"><xs:enumeration value="red"/><xs:enumeration value="green"/></xs:restriction></xs:simpleType>
  <xs:simpleType name="Percent"><xs:restriction base="xs:decimal"><xs:minInclusive value="0"/><xs:maxInclusive value="100"/><xs:fractionDigits value="2"/></xs:restriction></xs:simpleType>
  <xs:simpleType name="Small"><xs:restriction base="xs:int"><xs:minExclusive value="-1"/><xs:maxExclusive value="10"/></xs:restriction></xs:simpleType>
  <xs:complexType name="Money"><xs:simpleContent><xs:extension base="xs:decimal"><xs:attribute name="currency" type="t:Code" use="required"/></xs:extension></xs:simpleContent></xs:complexType>
  <xs:element name="Ref" type="xs:string"/>
  <xs:element name="Item">
    <xs:complexType>
      <xs:sequence>
        <xs:element name="id" type="xs:long"/>
        <xs:element name="code" type="t:Short"/>
        <xs:element name="color" type="t:Color" minOccurs="0"/>
        <xs:element name="tag" type="xs:string" minOccurs="0" maxOccurs="unbounded"/>
        <xs:choice>
          <xs:element name="byEmail" type="xs:string"/>
          <xs:element name="byPhone" type="xs:string"/>
        </xs:choice>
        <xs:element name="price" type="t:Money"/>
        <xs:element name="pct" type="t:Percent" minOccurs="0"/>
        <xs:element name="small" type="t:Small" minOccurs="0"/>
        <xs:element name="active" type="xs:boolean" minOccurs="0"/>
        <xs:element name="born" type="xs:date" minOccurs="0"/>
        <xs:element name="seen" type="xs:dateTime" minOccurs="0"/>
        <xs:element name="note" type="xs:string" nillable="true" minOccurs="0"/>
        <xs:element ref="t:Ref" minOccurs="0"/>
        <xs:element name="opts" minOccurs="0">
          <xs:complexType><xs:all><xs:element name="a" type="xs:int"/><xs:element name="b" type="xs:int" minOccurs="0"/></xs:all></xs:complexType>
        </xs:element>
      </xs:sequence>
      <xs:attribute name="version" type="xs:int"/>
    </xs:complexType>
  </xs:element>`;

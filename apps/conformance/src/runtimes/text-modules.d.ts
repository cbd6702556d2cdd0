// A contract's documents imported as text by the Worker's bundle (esbuild `loader: "text"`).
declare module "*.wsdl" {
  const text: string;
  export default text;
}
declare module "*.xsd" {
  const text: string;
  export default text;
}

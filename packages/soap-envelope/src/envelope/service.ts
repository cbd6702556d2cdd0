// The tests of wsdl/ construct services from here; the service is the HTTP binding's
// (binding/service.ts), and this module only names it where they look.
export { createSoapService } from "../binding/service.js";

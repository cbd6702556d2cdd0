// The names WS-Addressing 1.0 gives: its namespace, its predefined addresses and actions, and
// the namespaces a WSDL declares actions and the use of addressing in.

/**
 * WS-Addressing 1.0 Core §1.3: the namespace of its message addressing headers.
 * @see https://www.w3.org/TR/ws-addr-core/#namespaces
 */
export const WSA_NS = "http://www.w3.org/2005/08/addressing";

/**
 * The Member Submission's namespace (WS-Addressing, August 2004): its headers are not this node's
 * (README "WS-Addressing"); named in the MustUnderstand fault's Reason when one is mandatory.
 * @see https://www.w3.org/Submission/2004/SUBM-ws-addressing-20040810/
 */
export const WSA_SUBMISSION_NS = "http://schemas.xmlsoap.org/ws/2004/08/addressing";

/** Core §2.1: "Some endpoints cannot be located with a meaningful IRI": the reply goes back on the connection. */
export const WSA_ANONYMOUS = `${WSA_NS}/anonymous`;

/** Core §2.1: "Messages sent to EPRs whose [address] is this value MUST be discarded". */
export const WSA_NONE = `${WSA_NS}/none`;

/** Core §3.2.1: the relationship a reply has to its request, `RelationshipType`'s default. */
export const WSA_REPLY = `${WSA_NS}/reply`;

/** SOAP Binding §6: the [action] of the faults WS-Addressing defines (§6.4). */
export const WSA_FAULT_ACTION = `${WSA_NS}/fault`;

/** SOAP Binding §6: the [action] of a SOAP fault that has no action of its own. */
export const SOAP_FAULT_ACTION = `${WSA_NS}/soap/fault`;

/** WS-Addressing 1.0 Metadata §1.2: `wsam:Action` and the `wsam:Addressing` policy assertion. */
export const WSAM_NS = "http://www.w3.org/2007/05/addressing/metadata";

/**
 * WS-Addressing 1.0 WSDL Binding (Candidate Recommendation, 2006) §1.2: `wsaw:Action` and
 * `wsaw:UsingAddressing`, which WCF and Axis2 contracts still declare.
 */
export const WSAW_NS = "http://www.w3.org/2006/05/addressing/wsdl";

/** WS-Policy 1.5 and the 2004/09 namespace WCF writes. */
export const POLICY_NAMESPACES: readonly string[] = [
  "http://www.w3.org/ns/ws-policy",
  "http://schemas.xmlsoap.org/ws/2004/09/policy",
];

/** The message addressing headers this node reads (SOAP Binding §3.2), by local name. */
export const ADDRESSING_HEADERS: readonly string[] = [
  "Action",
  "MessageID",
  "To",
  "ReplyTo",
  "FaultTo",
  "From",
  "RelatesTo",
];

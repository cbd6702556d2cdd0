// The one function of proxy-addr (Express's own dependency) this package calls; its published
// types are a separate package, so the signature is declared here instead.
declare module "proxy-addr" {
  /** Compiles addresses, CIDR ranges and the names loopback, linklocal and uniquelocal into a trust function. */
  function compile(value: string | readonly string[]): (address: string, hop: number) => boolean;
  const proxyaddr: { compile: typeof compile };
  export default proxyaddr;
}

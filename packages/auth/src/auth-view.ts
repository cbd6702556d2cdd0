import type { RequestView } from "@svc/kernel";

/**
 * What the authentication core reads of a request: the kernel's `RequestView`, the same on every
 * framework. The client's address (the Basic failure budget's key) is what `requestFacts` of
 * `@svc/kernel` resolves for it behind the framework's recorded trust, and a parsed body (an
 * `access_token` in a form is refused) is the one recorded in its exchange.
 *
 * @deprecated Use `RequestView` of `@svc/kernel`: this is the same type.
 */
export type AuthView = RequestView;

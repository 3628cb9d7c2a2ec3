/**
 * The Bind verb's port: what the extender's edge asks of whoever creates Bindings (the API client in
 * cluster mode). Types only, so the edge and the API side both depend on the core, not on each other.
 */

/** ExtenderBindingArgs, in the extender's own terms. */
export interface BindRequest {
  readonly podName: string;
  readonly podNamespace: string;
  readonly podUid: string;
  readonly node: string;
}

/** The result of creating a Binding; `alreadyBound` when the pod was already bound to that node (a retried bind). */
export type BindOutcome =
  { readonly ok: true; readonly alreadyBound: boolean } | { readonly ok: false; readonly error: string };

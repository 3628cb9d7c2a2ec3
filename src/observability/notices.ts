/**
 * Decision notices: what the verbs tell the rest of the extender about each placement decision (one
 * per decision, not per call), e.g. so that the API side records it as an Event on the pod.
 */

export interface DecisionNotice {
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string };
  readonly result: 'placed' | 'no_fit';
  /** The chosen node, when placed. */
  readonly node: string | null;
  /** The explanation (core/text/explain.ts), as `kubectl describe pod` will show it. */
  readonly message: string;
}

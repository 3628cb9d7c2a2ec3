/**
 * The usage error of cluster mode without a kubeconfig, in a module of its own so that the CLI can
 * tell it apart (exit 2) without loading the Kubernetes client.
 */

/**
 * Thrown when no usable kubeconfig can be found ($KUBECONFIG unset, no ~/.kube/config, not in a
 * cluster), the one named cannot be read, or it names no cluster: a usage error (the CLI exits 2).
 */
export class NoKubeConfigError extends Error {
  override readonly name = 'NoKubeConfigError';
}

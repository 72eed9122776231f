/** ±20 %: the gateway replicas (and passes) that failed together do not retry in step. */
export function jittered(ms: number): number {
  return Math.round(ms * (0.8 + Math.random() * 0.4));
}

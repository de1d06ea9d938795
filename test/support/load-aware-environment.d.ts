// test/support/load-aware-environment.js (plain JavaScript: jest loads an environment untransformed).
export const machineContention: () => number;
export default class LoadAwareEnvironment {
  contention: () => number;
  handleTestEvent(event: unknown, state: unknown): Promise<void>;
}

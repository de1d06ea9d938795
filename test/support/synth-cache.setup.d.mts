export const SYNTH_CACHE_VARIABLE: string;
export default function globalSetup(): void;
export function globalTeardown(): void;

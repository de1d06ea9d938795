/**
 * The two APIs' base paths. Core's own rules need them (the old prefix
 * redirects to the Public one), so they live here rather than in the route
 * table above core, which re-exports them for everyone else.
 */
export const SURFACES = {
  public: '/api/public/v1',
  embed: '/api/embed/v1',
} as const;

export type Surface = keyof typeof SURFACES;

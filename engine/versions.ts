/** Values of the `engage-version` header (docs/contract.md section 7); the first is the current one. */
export const VERSION_HEADER = 'engage-version';
export const SUPPORTED_VERSIONS = ['2026-11-01'] as const;
export const CURRENT_VERSION = SUPPORTED_VERSIONS[0];

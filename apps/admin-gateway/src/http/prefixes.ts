/** Interface A lives under `/admin/api/v1.0`; `/admin/api/v1` is an alias. */
export const ADMIN_PREFIXES = ['admin/api/v1.0', 'admin/api/v1'] as const;

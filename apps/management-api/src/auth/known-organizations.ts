import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { isUuid } from '@switchboard/contracts';

/** How long an organization found in the database is taken as existing without asking again. */
export const KNOWN_ORGANIZATION_TTL_MS = 30_000;
const CACHE_LIMIT = 10_000;

/**
 * Whether an organization id names an organization of this deployment: the check a bearer token's
 * organization claim passes before it scopes a request (an API key's organization comes from its
 * own row). Enabled organizations found are remembered for a short while (organizations are never
 * deleted; one disabled since is forgotten on the `organizations.changed` notice, or after the TTL
 * should it be missed); ids not found, and disabled ones, are asked again each time, so an
 * organization created or enabled a moment ago is known at once.
 */
@Injectable()
export class KnownOrganizations {
  private readonly found = new Map<string, number>();

  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  /**
   * The organization's id as stored (lower-case) and whether it is disabled, or null when `id` is not
   * one of its organizations. Only enabled organizations are remembered (`forget` drops one disabled since).
   */
  async resolve(id: string): Promise<{ id: string; disabled: boolean } | null> {
    if (!isUuid(id)) return null;
    const key = id.toLowerCase();
    const now = Date.now();
    const expires = this.found.get(key);
    if (expires !== undefined && expires > now) return { id: key, disabled: false };
    const rows = (await this.ds.query('SELECT disabled FROM management.organization WHERE id = $1', [key])) as Array<{
      disabled: boolean;
    }>;
    this.found.delete(key);
    if (rows.length === 0) return null;
    if (rows[0]!.disabled) return { id: key, disabled: true };
    if (this.found.size >= CACHE_LIMIT) this.found.delete(this.found.keys().next().value as string);
    this.found.set(key, now + KNOWN_ORGANIZATION_TTL_MS);
    return { id: key, disabled: false };
  }

  /** Forgets an organization (it was disabled): the next token naming it asks the database. */
  forget(id: string): void {
    this.found.delete(id.toLowerCase());
  }
}

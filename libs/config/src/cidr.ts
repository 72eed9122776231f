import { isIP } from 'node:net';

export interface Cidr {
  family: 4 | 6;
  bits: bigint;
  prefix: number;
}

/** Parses `10.0.0.0/8`, `::1/128` or a bare address (full-length prefix). */
export function parseCidr(text: string): Cidr | undefined {
  const [addr, len, extra] = text.split('/');
  if (addr === undefined || extra !== undefined) return undefined;
  const family = isIP(addr);
  if (family !== 4 && family !== 6) return undefined;
  const max = family === 4 ? 32 : 128;
  const prefix = len === undefined ? max : /^\d+$/.test(len) ? Number(len) : NaN;
  if (!(prefix >= 0 && prefix <= max)) return undefined;
  return { family, bits: addressBits(addr, family), prefix };
}

function addressBits(addr: string, family: 4 | 6): bigint {
  if (family === 4) return addr.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
  let text = addr;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1]) {
    const n = addressBits(v4[1], 4);
    text = `${text.slice(0, -v4[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

/** True when `address` (IPv4, IPv6 or IPv4-mapped IPv6) falls inside one of the blocks. */
export function addressInCidrs(address: string, blocks: readonly Cidr[]): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const addr = mapped?.[1] ?? address;
  const family = isIP(addr);
  if (family !== 4 && family !== 6) return false;
  const bits = addressBits(addr, family);
  const width = family === 4 ? 32n : 128n;
  return blocks.some((b) => {
    if (b.family !== family) return false;
    const shift = width - BigInt(b.prefix);
    return bits >> shift === b.bits >> shift;
  });
}

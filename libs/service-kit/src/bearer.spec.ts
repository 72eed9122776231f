import { bearerToken } from './bearer.js';

describe('bearerToken', () => {
  it('takes the token of the Bearer scheme, whatever the case of the scheme name', () => {
    for (const header of ['Bearer abc.def.ghi', 'bearer abc.def.ghi', 'BEARER abc.def.ghi', 'bEaReR  abc.def.ghi ', 'Bearer\tabc.def.ghi']) {
      expect(bearerToken(header)).toBe('abc.def.ghi');
    }
    expect(bearerToken(['bearer first', 'Bearer second'])).toBe('first');
  });

  it('is undefined without the header or for another scheme', () => {
    for (const header of [undefined, '', 'Basic dXNlcjpwYXNz', 'Bearerabc', 'Bearer', 'Token abc', []]) expect(bearerToken(header)).toBeUndefined();
  });
});

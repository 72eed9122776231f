import { addressHosts, announcedAddresses } from './registration.js';

describe('announced addresses', () => {
  it('puts MEDIA_SERVER_PUBLIC_IP in place of {publicIp}, in brackets for IPv6', () => {
    expect(announcedAddresses(['udp://{publicIp}:40000-40999', 'wss://media.example.test'], '203.0.113.7')).toEqual([
      'udp://203.0.113.7:40000-40999',
      'wss://media.example.test',
    ]);
    expect(announcedAddresses(['udp://{publicIp}:40000-40999'], '2001:db8::7')).toEqual([
      'udp://[2001:db8::7]:40000-40999',
    ]);
  });

  it('leaves out an address naming {publicIp} when no IP is set', () => {
    expect(announcedAddresses(['udp://{publicIp}:40000-40999', 'udp://198.51.100.1:40000-40999'], undefined)).toEqual([
      'udp://198.51.100.1:40000-40999',
    ]);
  });

  it('lists each host once, port ranges and IPv6 brackets understood', () => {
    expect(
      addressHosts([
        'udp://203.0.113.7:40000-40999',
        'tcp://203.0.113.7:443',
        'udp://[2001:db8::7]:40000-40999',
        'not an address',
      ]),
    ).toEqual(['203.0.113.7', '[2001:db8::7]']);
  });
});

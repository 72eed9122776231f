import { midsByKind } from './sdp.js';

describe('midsByKind', () => {
  it('lists the mids of the audio and video sections, leaving out data channels', () => {
    const sdp = [
      'v=0',
      'm=audio 9 UDP/TLS/RTP/SAVPF 111',
      'a=mid:0',
      'm=video 9 UDP/TLS/RTP/SAVPF 96',
      'a=mid:1',
      'm=application 9 UDP/DTLS/SCTP webrtc-datachannel',
      'a=mid:2',
      'm=video 9 UDP/TLS/RTP/SAVPF 96',
      'a=mid:screen',
      '',
    ].join('\r\n');
    expect(midsByKind(sdp)).toEqual({ audio: ['0'], video: ['1', 'screen'] });
  });
});

/** The mids of the audio and of the video m-sections of an SDP, in order (`a=mid:` of each). */
export function midsByKind(sdp: string): { audio: string[]; video: string[] } {
  const mids = { audio: [] as string[], video: [] as string[] };
  let kind: string | undefined;
  for (const line of sdp.split(/\r?\n/)) {
    if (line.startsWith('m=')) kind = line.slice(2).split(' ')[0];
    else if (line.startsWith('a=mid:') && (kind === 'audio' || kind === 'video')) mids[kind].push(line.slice(6).trim());
  }
  return mids;
}

#!/usr/bin/env node
// The media server side of recordings from the command line (tests and demos).
//
//   node tools/media/cli.mjs write --dir <directory> --id <connectionRecordingId> --duration <seconds>
//        [--mute-audio <from>-<to>]... [--mute-video <from>-<to>]... [--no-audio] [--no-video]
//        [--frequency <Hz>] [--size <w>x<h>] [--rate <fps>]
//     Writes <dir>/<id>.audio.ogg (sine tone, Opus) and <dir>/<id>.video.webm (testsrc2, VP8),
//     silent / black during the mute intervals (seconds from the start). The directory and id are
//     what recording-service's `media.recordingTarget` query answers.
//
//   node tools/media/cli.mjs probe <file>...
//     Prints container, duration and streams of each file as JSON.
import { probeFile, writeConnectionMedia } from './media.mjs';

const USAGE = `Usage:
  node tools/media/cli.mjs write --dir <directory> --id <connectionRecordingId> --duration <seconds>
       [--mute-audio <from>-<to>]... [--mute-video <from>-<to>]... [--no-audio] [--no-video]
       [--frequency <Hz>] [--size <w>x<h>] [--rate <fps>]
  node tools/media/cli.mjs probe <file>...`;

function fail(message) {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function parse(argv) {
  const o = { muteAudio: [], muteVideo: [], audio: true, video: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) fail(`${a} needs a value`);
      return v;
    };
    const interval = (v) => {
      const m = /^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(v);
      if (!m || Number(m[2]) <= Number(m[1])) fail(`${a} takes <from>-<to> in seconds, got ${v}`);
      return [Number(m[1]), Number(m[2])];
    };
    switch (a) {
      case '--dir':
        o.dir = value();
        break;
      case '--id':
        o.id = value();
        break;
      case '--duration':
        o.duration = Number(value());
        break;
      case '--frequency':
        o.frequency = Number(value());
        break;
      case '--rate':
        o.rate = Number(value());
        break;
      case '--size': {
        const m = /^(\d+)x(\d+)$/.exec(value());
        if (!m) fail('--size takes <w>x<h>');
        o.width = Number(m[1]);
        o.height = Number(m[2]);
        break;
      }
      case '--mute-audio':
        o.muteAudio.push(interval(value()));
        break;
      case '--mute-video':
        o.muteVideo.push(interval(value()));
        break;
      case '--no-audio':
        o.audio = false;
        break;
      case '--no-video':
        o.video = false;
        break;
      default:
        fail(`unknown option ${a}`);
    }
  }
  return o;
}

/** Mute intervals as a timeline of updates (seconds from the start). */
function timeline(o) {
  const points = new Set([0]);
  for (const [a, b] of [...o.muteAudio, ...o.muteVideo]) {
    points.add(a);
    points.add(b);
  }
  const inside = (list, t) => list.some(([a, b]) => t >= a && t < b);
  return [...points]
    .sort((x, y) => x - y)
    .map((at) => ({ at, audioMuted: inside(o.muteAudio, at), videoMuted: inside(o.muteVideo, at) }));
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'write') {
  const o = parse(rest);
  if (!o.dir || !o.id || !(o.duration > 0)) fail('write needs --dir, --id and a positive --duration');
  const written = await writeConnectionMedia(
    {
      directory: o.dir,
      audioBase: `${o.id}.audio`,
      videoBase: `${o.id}.video`,
      hasAudio: o.audio,
      hasVideo: o.video,
      startTimestamp: 0,
      stopTimestamp: o.duration * 1000,
    },
    {
      durationSeconds: o.duration,
      frequency: o.frequency,
      width: o.width,
      height: o.height,
      frameRate: o.rate,
      updates: timeline(o),
    },
  );
  process.stdout.write(`${JSON.stringify(written)}\n`);
} else if (command === 'probe') {
  if (rest.length === 0) fail('probe needs at least one file');
  for (const file of rest) process.stdout.write(`${JSON.stringify({ file, ...(await probeFile(file)) })}\n`);
} else {
  fail(command ? `unknown command ${command}` : 'a command is needed');
}

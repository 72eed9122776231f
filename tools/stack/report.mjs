// Text the launcher prints: relative paths, indented log tails, exits.
import path from 'node:path';

export function rel(paths, file) {
  return path.relative(paths.root, file) || '.';
}

export function indent(text, prefix = '    ') {
  return text
    .split('\n')
    .map((line) => prefix + line)
    .join('\n');
}

export function formatError(error) {
  let text = error.message;
  if (error.logTail) text += `\n${indent(error.logTail, '  │ ')}`;
  return text;
}

export function describeExit(exit) {
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code}`;
}

export function lastJsonLine(stdout) {
  const lines = stdout.trim().split('\n').reverse();
  for (const line of lines) {
    const text = line.trim();
    if (!text.startsWith('{')) continue;
    try {
      return JSON.parse(text);
    } catch {
      // not the answer line
    }
  }
  return null;
}

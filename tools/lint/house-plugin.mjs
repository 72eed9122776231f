// House rules that no built-in lint rule covers: line width (Prettier cannot wrap strings and
// comments) and comment length (a comment says why in one to three lines; essays go to docs/).
import { boundaryViolation, loadProjects, projectOf } from '../arch/boundaries.mjs';

const LINE_LIMIT = 120;
const COMMENT_BLOCK_LIMIT = 12;

// Like ESLint's max-len with ignoreStrings, ignoreTemplateLiterals and ignoreUrls: a string cannot be
// wrapped without changing it, and Prettier keeps the code around it within the width.
const maxLineLength = {
  meta: { type: 'layout', docs: { description: `Lines hold at most ${LINE_LIMIT} characters` } },
  create(context) {
    const linesWithStrings = new Set();
    const noteLines = (node) => {
      for (let line = node.loc.start.line; line <= node.loc.end.line; line += 1) linesWithStrings.add(line);
    };
    return {
      Literal(node) {
        if (typeof node.value === 'string') noteLines(node);
      },
      TemplateLiteral: noteLines,
      'Program:exit'() {
        context.sourceCode.lines.forEach((line, index) => {
          if (line.length <= LINE_LIMIT || line.includes('://') || linesWithStrings.has(index + 1)) return;
          context.report({
            loc: { start: { line: index + 1, column: LINE_LIMIT }, end: { line: index + 1, column: line.length } },
            message: `Line is ${line.length} characters long; the limit is ${LINE_LIMIT}.`,
          });
        });
      },
    };
  },
};

/** Consecutive `//` lines form one block, as a reader sees them. */
function commentBlocks(comments) {
  const blocks = [];
  for (const comment of comments) {
    const previous = blocks.at(-1);
    const joinsPrevious =
      comment.type === 'Line' && previous?.type === 'Line' && comment.loc.start.line === previous.loc.end.line + 1;
    if (joinsPrevious) previous.loc = { start: previous.loc.start, end: comment.loc.end };
    else blocks.push({ type: comment.type, loc: { start: comment.loc.start, end: comment.loc.end } });
  }
  return blocks;
}

const maxCommentLines = {
  meta: { type: 'suggestion', docs: { description: `Comment blocks hold at most ${COMMENT_BLOCK_LIMIT} lines` } },
  create(context) {
    return {
      Program() {
        for (const block of commentBlocks(context.sourceCode.getAllComments())) {
          const lines = block.loc.end.line - block.loc.start.line + 1;
          if (lines <= COMMENT_BLOCK_LIMIT) continue;
          context.report({
            loc: block.loc,
            message: `Comment block of ${lines} lines; at most ${COMMENT_BLOCK_LIMIT}. Move the explanation to the README or docs/.`,
          });
        }
      },
    };
  },
};

let workspaceProjects;

// The Nx module boundaries (tools/arch/boundaries.mjs) on every import of a project's files.
const projectBoundaries = {
  meta: { type: 'problem', docs: { description: 'Apps talk through contracts; libraries never import apps' } },
  create(context) {
    workspaceProjects ??= loadProjects(context.cwd);
    const project = projectOf(workspaceProjects, context.filename);
    if (!project) return {};
    const check = (node) => {
      const specifier = node.source?.value;
      if (typeof specifier !== 'string') return;
      const rule = boundaryViolation(project, workspaceProjects, context.filename, specifier);
      if (rule) context.report({ node: node.source, message: `Module boundary: ${rule} ('${specifier}').` });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

export default {
  meta: { name: 'house' },
  rules: {
    'max-line-length': maxLineLength,
    'max-comment-lines': maxCommentLines,
    'project-boundaries': projectBoundaries,
  },
};

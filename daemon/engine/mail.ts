/**
 * `git format-patch` mail and mailboxes (what `git am` reads): each mail is a patch of its own,
 * with mail headers, a commit message, a `---` line, a diffstat, the diff, and a `-- ` signature
 * with git's version after it. Only the diff is hunk text.
 *
 * The mailbox is turned into diff lines the unified parser reads in one pass: every line that is
 * not part of a mail's diff becomes an empty line (so line numbers in messages stay those of the
 * text sent), and each mail's first line starts a part of the series.
 */
import { engineError } from './errors.ts';
import { fail, ok, type Diagnostic, type Result } from './types.ts';
import { GIT_HEADER, isFileHeaderAt } from './unifiedLines.ts';

/** `From <sha> Mon Sep 17 00:00:00 2001`: format-patch's fixed mbox separator; or any mbox `From ` line with a date. */
const MBOX_FROM = /^From \S+ +(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d+ \d\d:\d\d:\d\d \d{4}/;
const HEADER = /^[A-Za-z][A-Za-z0-9-]*:[ \t]/;
const CONTINUATION = /^[ \t]+\S/;
const SIGNATURE = '-- ';
const HUNK_COUNTS = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;
const DIFF_LINE = /^[ +\-@\\]/;

export interface Mailbox {
  /** The patch lines with everything but each mail's diff blanked. */
  readonly lines: readonly string[];
  /** Where each mail with a diff starts (0-based line) and its subject. */
  readonly parts: readonly { readonly start: number; readonly title: string }[];
  readonly diagnostics: readonly Diagnostic[];
}

interface Mail {
  readonly start: number;
  readonly end: number;
}

/** The mailbox in `lines`, or undefined when they are not mail (a plain diff). */
export function readMailbox(lines: readonly string[]): Result<Mailbox> | undefined {
  const mails = splitMails(lines);
  if (mails === undefined) return undefined;
  const masked: string[] = Array.from({ length: lines.length }, () => '');
  const parts: { start: number; title: string }[] = [];
  const withoutDiff: string[] = [];
  for (const [number, mail] of mails.entries()) {
    const headers = readHeaders(lines, mail);
    const encoding = headers.get('content-transfer-encoding')?.toLowerCase();
    if (encoding === 'quoted-printable' || encoding === 'base64') {
      return fail(engineError('parse_error', `Mail ${number + 1} (line ${mail.start + 1}) has a ${encoding} body; save it decoded (as \`git format-patch\` writes it) and send that.`));
    }
    const title = subjectOf(headers) ?? `mail ${number + 1}`;
    const diff = diffRange(lines, { start: headers.bodyStart, end: mail.end });
    if (diff === undefined) {
      withoutDiff.push(title);
      continue;
    }
    for (let index = diff.start; index < diff.end; index++) masked[index] = lines[index] ?? '';
    parts.push({ start: mail.start, title });
  }
  const diagnostics: Diagnostic[] = [];
  if (mails.length > 1 || withoutDiff.length > 0) {
    diagnostics.push({ code: 'mailbox', message: `A mailbox of ${mails.length} mail(s) applied in order as one transaction: ${parts.map((part, index) => `${index + 1}. ${part.title}`).join('; ')}.` });
  }
  if (withoutDiff.length > 0) {
    diagnostics.push({ code: 'mail_without_diff', message: `Mails without a diff were skipped: ${withoutDiff.join('; ')}.` });
  }
  return ok({ lines: masked, parts, diagnostics });
}

/** The mails, each from its separator (or headers) on; undefined when the text is not mail. */
function splitMails(lines: readonly string[]): Mail[] | undefined {
  const starts: number[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (MBOX_FROM.test(lines[index]!) && HEADER.test(lines[index + 1] ?? '')) starts.push(index);
  }
  if (starts.length === 0) {
    const first = lines.findIndex((line) => line.trim() !== '');
    if (first < 0 || !/^(?:From|Subject|Date): /.test(lines[first] ?? '')) return undefined;
    const headerBlock = lines.slice(first, blankLineAfter(lines, first));
    if (!headerBlock.some((line) => line.startsWith('Subject: '))) return undefined;
    starts.push(first);
  }
  return starts.map((start, index) => ({ start, end: starts[index + 1] ?? lines.length }));
}

function blankLineAfter(lines: readonly string[], from: number): number {
  return indexWhere(lines, { start: from, end: lines.length }, (line) => line.trim() === '') ?? lines.length;
}

/**
 * The first index in `range` whose line satisfies `test`. Scans only the range: a search from
 * line 0 for each mail made a mailbox of many mails quadratic.
 */
function indexWhere(lines: readonly string[], range: Mail, test: (line: string) => boolean): number | undefined {
  for (let index = range.start; index < range.end; index++) if (test(lines[index] ?? '')) return index;
  return undefined;
}

interface Headers extends Map<string, string> {
  bodyStart: number;
}

/** The mail's headers (lower-case names, continuation lines unfolded) and where its body starts. */
function readHeaders(lines: readonly string[], mail: Mail): Headers {
  const headers = new Map<string, string>() as Headers;
  let index = MBOX_FROM.test(lines[mail.start] ?? '') ? mail.start + 1 : mail.start;
  let last: string | undefined;
  for (; index < mail.end; index++) {
    const line = lines[index] ?? '';
    if (line.trim() === '') break;
    if (last !== undefined && CONTINUATION.test(line)) {
      headers.set(last, `${headers.get(last) ?? ''} ${line.trim()}`);
    } else if (HEADER.test(line)) {
      last = line.slice(0, line.indexOf(':')).toLowerCase();
      headers.set(last, line.slice(line.indexOf(':') + 1).trim());
    } else {
      break;
    }
  }
  headers.bodyStart = index;
  return headers;
}

function subjectOf(headers: Headers): string | undefined {
  return headers.get('subject')?.replace(/^\[PATCH[^\]]*\]\s*/, '');
}

/**
 * The lines of a mail body that are diff: from the first diff header after the `---` line that
 * ends the commit message (or after the message start when there is none, as `git am` does), up
 * to the `-- ` signature.
 */
function diffRange(lines: readonly string[], body: Mail): Mail | undefined {
  const separator = indexWhere(lines, body, (line) => line.trimEnd() === '---');
  const from = separator === undefined ? body.start : separator + 1;
  let start = -1;
  for (let index = from; index < body.end; index++) {
    const line = lines[index] ?? '';
    if (line.startsWith(GIT_HEADER) || isFileHeaderAt(lines, index)) {
      start = index;
      break;
    }
  }
  if (start < 0) return undefined;
  return { start, end: signatureLine(lines, { start, end: body.end }) ?? body.end };
}

/**
 * The `-- ` line that starts the mail's signature: the last such line, with nothing diff-like
 * after it, and only when the hunk before it is already complete by its counts (a removed line
 * `- ` is written `-- ` too).
 */
function signatureLine(lines: readonly string[], diff: Mail): number | undefined {
  let candidate = -1;
  for (let index = diff.end - 1; index >= diff.start; index--) {
    const line = lines[index] ?? '';
    if (line === SIGNATURE) {
      candidate = index;
      break;
    }
    if (DIFF_LINE.test(line)) return undefined;
  }
  if (candidate < 0) return undefined;
  return hunkCompleteBefore(lines, diff.start, candidate) ? candidate : undefined;
}

/** Does the last hunk before `end` hold as many lines as its header declares? */
function hunkCompleteBefore(lines: readonly string[], start: number, end: number): boolean {
  let header = -1;
  for (let index = end - 1; index >= start; index--) {
    if ((lines[index] ?? '').startsWith('@@')) {
      header = index;
      break;
    }
  }
  if (header < 0) return true;
  const counts = HUNK_COUNTS.exec(lines[header] ?? '');
  if (!counts) return true;
  const declaredOld = Number(counts[1] ?? '1');
  const declaredNew = Number(counts[2] ?? '1');
  let old = 0;
  let added = 0;
  for (let index = header + 1; index < end; index++) {
    const prefix = (lines[index] ?? '').charAt(0);
    if (prefix === ' ' || prefix === '-') old++;
    if (prefix === ' ' || prefix === '+') added++;
  }
  return old >= declaredOld && added >= declaredNew;
}

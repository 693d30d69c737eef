/**
 * The relative links of the Markdown pages a package ships, checked against the files the
 * tarball holds: a link to a path the package does not contain is dead for every user who
 * reads the docs from node_modules (or on the registry's page).
 */
import { posix } from 'node:path';

/** One relative link of a page: where it points and the line it stands on. */
export interface PageLink {
  line: number;
  /** The path part, resolved against the page's folder ('' for a link within the page). */
  path: string;
  /** The part after '#', if any. */
  anchor: string | undefined;
  /** The link as written. */
  target: string;
}

/**
 * The page's lines outside fenced code blocks, each with its inline code spans blanked (or, with
 * `keepCode`, only their backticks dropped).
 */
function proseLines(text: string, keepCode = false): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fenced = false;
  text.split('\n').forEach((raw, i) => {
    if (/^\s*```/.test(raw)) {
      fenced = !fenced;
      return;
    }
    if (!fenced) out.push({ line: i + 1, text: raw.replace(/`([^`]*)`/g, (span, code: string) => (keepCode ? code : ' '.repeat(span.length))) });
  });
  return out;
}

/**
 * Every relative link of `page` (a path inside the package, such as `docs/browser.md`): inline
 * links and images (`[x](path)`, `[x](path#anchor)`, `[x](#anchor)`) and reference definitions
 * (`[x]: path`). Links with a scheme (`https:`, `mailto:`) are left out; so is text in code.
 */
export function relativeLinks(page: string, text: string): PageLink[] {
  const links: PageLink[] = [];
  const dir = posix.dirname(page);
  for (const { line, text: prose } of proseLines(text)) {
    const targets = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g), ...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)].map((m) => m[1]!);
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const hash = target.indexOf('#');
      const raw = hash === -1 ? target : target.slice(0, hash);
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const path = raw === '' ? '' : posix.normalize(posix.join(dir, decodeURIComponent(raw))).replace(/\/$/, '');
      links.push({ line, path, anchor, target });
    }
  }
  return links;
}

/**
 * The anchors GitHub gives a page's headings: the heading's text lowercased, without markup and
 * punctuation, spaces turned to hyphens; a repeated slug gets `-1`, `-2` … as GitHub numbers them.
 */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: prose } of proseLines(text, true)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(prose);
    if (!heading) continue;
    const words = heading[1]!.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const slug = words.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/**
 * The links of `pages` that lead nowhere inside the package: a path none of `files` is (or is a
 * folder of), or an anchor that no heading of the Markdown page it names has. `read` returns a
 * shipped page's text. Each problem is one line: `page:line → target (why)`.
 */
export function deadLinks(pages: string[], files: string[], read: (path: string) => string): string[] {
  const shipped = new Set(files);
  const isFolder = (path: string) => files.some((file) => file.startsWith(`${path}/`));
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (path: string) => {
    if (!anchorsOf.has(path)) anchorsOf.set(path, headingAnchors(read(path)));
    return anchorsOf.get(path)!;
  };
  const dead: string[] = [];
  for (const page of pages) {
    for (const link of relativeLinks(page, read(page))) {
      const path = link.path === '' ? page : link.path;
      if (!shipped.has(path) && !isFolder(path)) {
        dead.push(`${page}:${link.line} → ${link.target} (${path} is not in the package)`);
      } else if (link.anchor !== undefined && path.endsWith('.md') && shipped.has(path) && !anchors(path).has(link.anchor)) {
        dead.push(`${page}:${link.line} → ${link.target} (no heading of ${path} has the anchor #${link.anchor})`);
      }
    }
  }
  return dead;
}

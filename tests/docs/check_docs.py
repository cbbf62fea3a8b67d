#!/usr/bin/python3
"""Fails when the documentation drifts from what it documents.

    check_docs.py SOURCE_DIR [STROM]

- docs/job-file.md has a section (a heading naming `Struct` or `Enum` in backticks) for every
  struct and enum of schema/job.capnp, and names every field, union member and enumerant of it
  as a code span of its own (`name`) in that section;
- docs/cli.md has a section for every command `strom --help` lists (a heading with
  `strom COMMAND`), and mentions every --flag that `strom --help` and `strom COMMAND --help`
  print (and `--help-all` where a help text offers it, and `strom COMMAND SUB --help` for
  the subcommands a help text names, such as `strom sim calibrate`), none of whose lines is
  longer than 100 characters;
- every relative link in README.md and docs/*.md points at a file of the repository (and at a
  heading of it, for `file.md#anchor`);
- README.md stays a README: at most 300 lines, no development history.

Exit 0 when all holds, 1 listing every problem. Standard library only: ctest runs it with
Debian's /usr/bin/python3.
"""

import os
import re
import subprocess
import sys
import tempfile

README_MAX_LINES = 300  # issue 43's bound: a README a newcomer reads in full
HELP_TIMEOUT_S = 60     # a --help that takes longer is itself a bug
HELP_COLUMNS = 100      # issue 43: help that reads in a terminal

# -- schema ----------------------------------------------------------------------------------


def strip_capnp_comments(text):
    """The schema without its `#` comments (a `#` inside a string literal is kept)."""
    out = []
    for line in text.splitlines():
        in_string = False
        for i, ch in enumerate(line):
            if ch == '"':
                in_string = not in_string
            elif ch == "#" and not in_string:
                line = line[:i]
                break
        out.append(line)
    return "\n".join(out)


class SchemaItem:
    def __init__(self, kind, name, line):
        self.kind = kind      # "struct" or "enum"
        self.name = name
        self.line = line
        self.members = []     # (name, line): fields, union members, group names, enumerants


def parse_capnp(text):
    """The structs and enums of a Cap'n Proto schema with their member names, in order.

    Members of an unnamed `union {` and of a named `name :union {` / `name :group {` count as
    the enclosing struct's (the group's name too), as a job file writes them there.
    """
    text = strip_capnp_comments(text)
    items = []
    stack = []  # SchemaItem for a struct or enum, None for a union or group inside one
    statement = ""
    line = 1
    statement_line = 1

    def owner():
        for entry in reversed(stack):
            if entry is not None:
                return entry
        return None

    for token in re.finditer(r"[{};]|[^{};]+", text):
        chunk = token.group(0)
        if chunk not in "{};":
            if not statement.strip():
                statement_line = line + chunk[: len(chunk) - len(chunk.lstrip())].count("\n")
            statement += chunk
            line += chunk.count("\n")
            continue
        head = " ".join(statement.split())
        statement = ""
        if chunk == "{":
            declared = re.match(r"(struct|enum)\s+([A-Za-z_]\w*)", head)
            group = re.match(r"([A-Za-z_]\w*)\s*(?:@\d+\s*)?:\s*(union|group)\b", head)
            if declared:
                item = SchemaItem(declared.group(1), declared.group(2), statement_line)
                items.append(item)
                stack.append(item)
            elif group:
                if owner() is not None:
                    owner().members.append((group.group(1), statement_line))
                stack.append(None)
            else:  # `union {` and anything else that opens a block
                stack.append(None)
        elif chunk == "}":
            if stack:
                stack.pop()
        else:  # `;` ends a field, an enumerant, a `using` or an annotation
            current = owner()
            if current is None:
                continue
            if current.kind == "enum":
                enumerant = re.match(r"([A-Za-z_]\w*)\s*@\d+\s*(\$.*)?$", head)
                if enumerant:
                    current.members.append((enumerant.group(1), statement_line))
            else:
                field = re.match(r"([A-Za-z_]\w*)\s*@\d+\s*:", head)
                if field:
                    current.members.append((field.group(1), statement_line))
    return items


# -- markdown --------------------------------------------------------------------------------


def without_fences(lines):
    """The lines with those inside ``` or ~~~ fences blanked (their count kept)."""
    out = []
    fence = None
    for line in lines:
        stripped = line.lstrip()
        if fence is None and (stripped.startswith("```") or stripped.startswith("~~~")):
            fence = stripped[:3]
            out.append("")
        elif fence is not None:
            if stripped.startswith(fence):
                fence = None
            out.append("")
        else:
            out.append(line)
    return out


def headings(lines):
    """(line index, level, text) of every ATX heading outside code fences."""
    found = []
    for i, line in enumerate(without_fences(lines)):
        m = re.match(r"(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            found.append((i, len(m.group(1)), m.group(2)))
    return found


def code_spans(text):
    return [m.group(2).strip() for m in re.finditer(r"(`+)(.+?)\1", text, re.S)]


def sections(lines):
    """Maps each heading's text to the text below it up to the next heading of its level or
    above (a heading's text as written, several sections for one text joined)."""
    marks = headings(lines)
    body = without_fences(lines)
    result = {}
    for n, (start, level, text) in enumerate(marks):
        end = len(lines)
        for later, later_level, _ in marks[n + 1:]:
            if later_level <= level:
                end = later
                break
        result.setdefault(text, []).append("\n".join(body[start + 1:end]))
    return {text: "\n".join(parts) for text, parts in result.items()}


def slug(heading_text):
    """GitHub's anchor for a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading_text)  # a link's text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(lines):
    seen = {}
    result = set()
    for _, _, text in headings(lines):
        base = slug(text)
        count = seen.get(base, 0)
        result.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return result


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


# -- checks ----------------------------------------------------------------------------------


def check_job_reference(source_dir):
    schema_path = os.path.join(source_dir, "schema", "job.capnp")
    doc_path = os.path.join(source_dir, "docs", "job-file.md")
    with open(schema_path, encoding="utf-8") as f:
        items = parse_capnp(f.read())
    if not items:
        return [f"{schema_path}: no struct or enum found (has the schema's syntax changed?)"]
    doc_sections = sections(read_lines(doc_path))
    problems = []
    for item in items:
        section = [body for text, body in doc_sections.items() if item.name in code_spans(text)]
        if not section:
            problems.append(f"docs/job-file.md: no section for {item.kind} {item.name} "
                            f"(schema/job.capnp:{item.line}): add a heading naming `{item.name}`")
            continue
        documented = set(code_spans("\n".join(section)))
        for name, line in item.members:
            if name not in documented:
                what = "enumerant" if item.kind == "enum" else "field"
                problems.append(f"docs/job-file.md: {what} {item.name}.{name} "
                                f"(schema/job.capnp:{line}) is not named as `{name}` in the "
                                f"section for {item.name}")
    return problems


def help_text(strom, args, workdir):
    """stdout and stderr of `strom ARGS` together, whatever its exit status."""
    try:
        run = subprocess.run([strom, *args], cwd=workdir, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=HELP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None
    return run.stdout.decode("utf-8", "replace")


FLAG_TOKEN = re.compile(r"(?<![A-Za-z0-9-])--[A-Za-z0-9][A-Za-z0-9-]*(\*?)")


def flags_of(text):
    """The --flags a text names; a family such as `--tls-*` names none by itself."""
    return {m.group(0).rstrip("-") for m in FLAG_TOKEN.finditer(text) if not m.group(1)}



def commands_of(top_help):
    """The command names of `strom --help`'s "commands:" list, `help` left out."""
    names = []
    listing = False
    for line in top_help.splitlines():
        if line.strip().lower().startswith("commands"):
            listing = True
            continue
        if listing:
            if not line.strip():
                break
            m = re.match(r"\s{1,8}([a-z][a-z0-9-]*)\b", line)
            if m and m.group(1) != "help":
                names.append(m.group(1))
    return names


def check_cli_reference(source_dir, strom):
    doc_path = os.path.join(source_dir, "docs", "cli.md")
    doc_lines = read_lines(doc_path)
    doc = "\n".join(doc_lines)
    documented_flags = flags_of(doc)
    doc_headings = [text.replace("`", "") for _, _, text in headings(doc_lines)]
    strom = os.path.abspath(strom)  # the commands run in a scratch folder
    if not os.access(strom, os.X_OK):
        return [f"{strom}: not an executable strom program"]
    problems = []
    with tempfile.TemporaryDirectory(prefix="strom-docs-") as workdir:
        top = help_text(strom, ["--help"], workdir)
        if top is None:
            return [f"{strom} --help: no answer within {HELP_TIMEOUT_S} s"]
        commands = commands_of(top)
        if not commands:
            return [f"{strom} --help: no commands listed (has its layout changed?):\n{top}"]
        texts = {"strom --help": top}
        for command in commands:
            text = help_text(strom, [command, "--help"], workdir)
            if text is None:
                problems.append(f"strom {command} --help: no answer within {HELP_TIMEOUT_S} s")
                continue
            texts[f"strom {command} --help"] = text
            if "--help-all" in text:
                more = help_text(strom, [command, "--help-all"], workdir)
                if more is not None:
                    texts[f"strom {command} --help-all"] = more
            # Subcommands a help text names ('strom sim calibrate JOB'): their own options.
            for sub in sorted(set(re.findall(rf"\bstrom {re.escape(command)} ([a-z][a-z-]*)\b",
                                             text))):
                more = help_text(strom, [command, sub, "--help"], workdir)
                if more is not None:
                    texts[f"strom {command} {sub} --help"] = more
            if not any(re.search(rf"\bstrom {re.escape(command)}\b", h) for h in doc_headings):
                problems.append(f"docs/cli.md: no section for 'strom {command}' (a heading "
                                f"naming `strom {command}`)")
    for source, text in texts.items():
        for flag in sorted(flags_of(text)):
            if flag not in documented_flags:
                problems.append(f"docs/cli.md: {flag} (from '{source}') is not mentioned")
        for line in text.splitlines():
            if len(line) > HELP_COLUMNS:
                problems.append(f"'{source}': a line of {len(line)} characters (at most "
                                f"{HELP_COLUMNS}): {line}")
    return problems


LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")


def links_of(lines):
    """(line number, target) of every inline or reference link outside code."""
    found = []
    for n, line in enumerate(without_fences(lines), start=1):
        prose = re.sub(r"(`+).+?\1", "", line)
        found += [(n, m.group(1)) for m in LINK.finditer(prose)]
        m = REFERENCE.match(prose)
        if m:
            found.append((n, m.group(1)))
    return found


def check_links(source_dir):
    root = os.path.realpath(source_dir)
    docs = os.path.join(root, "docs")
    pages = [os.path.join(root, "README.md")]
    pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    problems = []
    for page in pages:
        name = os.path.relpath(page, root)
        lines = read_lines(page)
        for n, target in links_of(lines):
            if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):
                continue  # http:, https:, mailto: ...
            path, _, anchor = target.partition("#")
            resolved = os.path.realpath(os.path.join(os.path.dirname(page), path)) if path \
                else page
            if os.path.commonpath([root, resolved]) != root:
                problems.append(f"{name}:{n}: {target} points outside the repository")
                continue
            if not os.path.exists(resolved):
                problems.append(f"{name}:{n}: {target}: no such file")
                continue
            if anchor and resolved.endswith(".md") and os.path.isfile(resolved):
                if anchor not in anchors(read_lines(resolved)):
                    problems.append(f"{name}:{n}: {target}: no heading with the anchor "
                                    f"#{anchor} in {os.path.relpath(resolved, root)}")
    return problems


HISTORY = [re.compile(p, re.I) for p in (r"\bsession \d+", r"\bissue #?\d+", r"\bcommit [0-9a-f]{7,}")]


def check_readme(source_dir):
    lines = read_lines(os.path.join(source_dir, "README.md"))
    problems = []
    if len(lines) > README_MAX_LINES:
        problems.append(f"README.md: {len(lines)} lines, more than {README_MAX_LINES}: move "
                        f"the details to docs/")
    for n, line in enumerate(lines, start=1):
        for pattern in HISTORY:
            if pattern.search(line):
                problems.append(f"README.md:{n}: development history ('{pattern.pattern}') "
                                f"belongs in CHANGELOG.md")
    return problems


def main(argv):
    if len(argv) not in (2, 3):
        print(f"usage: {argv[0]} SOURCE_DIR [STROM]", file=sys.stderr)
        return 2
    source_dir = argv[1]
    problems = check_job_reference(source_dir)
    if len(argv) == 3:
        problems += check_cli_reference(source_dir, argv[2])
    else:
        print("no strom binary given: the CLI reference is not checked")
    problems += check_links(source_dir)
    problems += check_readme(source_dir)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s): the documentation has drifted")
        return 1
    print("docs: job-file reference, CLI reference, links and README hold")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

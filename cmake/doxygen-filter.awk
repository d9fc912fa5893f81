# Doxygen's INPUT_FILTER for the public headers (see cmake/Doxyfile.in):
# prints a header with its plain C comments marked as documentation. The
# headers document each declaration with an ordinary block comment above
# it, or after a struct member or enumerator on its line; that text is the
# documentation, so the filter changes only markers, and keeps every line
# where it is so doxygen's file:line messages point at the header:
#   - the banner opening line 1 becomes "/** @file": the file's description;
#   - a comment opening a line becomes "/**" (with JAVADOC_AUTOBRIEF its
#     first sentence is the brief), one after code on its line "/**<";
#   - a comment at the left margin documents the run of declarations
#     below it up to the next blank line (pgw_params_set_null ... _jsonb
#     share one): the run becomes a member group, and DISTRIBUTE_GROUP_DOC
#     gives every member the comment;
#   - inside comments, characters doxygen reads as commands or markup
#     (\ @ < > & ::) are escaped, so the text shows as written.
# Comments after #endif and #else name a condition and are left alone.

# Every occurrence of 'from' in s replaced by 'to', taken literally (gsub's
# replacement rules for backslashes differ between awks).
function replace_all(s, from, to,    out, i) {
    out = ""
    while ((i = index(s, from)) > 0) {
        out = out substr(s, 1, i - 1) to
        s = substr(s, i + length(from))
    }
    return out s
}

function escape_text(s) {
    s = replace_all(s, "\\", "\\\\")
    s = replace_all(s, "@", "\\@")
    s = replace_all(s, "<", "\\<")
    s = replace_all(s, ">", "\\>")
    s = replace_all(s, "&", "\\&")
    s = replace_all(s, "::", "\\::")
    return s
}

# Escapes the comment text of a line that is entirely inside a comment, or
# from position 'from' on; the comment markers themselves are kept.
function escape_from(line, from,    head, body, tail, end) {
    head = substr(line, 1, from - 1)
    body = substr(line, from)
    end = index(body, "*/")
    if (end > 0) {
        tail = substr(body, end)
        body = substr(body, 1, end - 1)
    } else {
        tail = ""
    }
    return head escape_text(body) tail
}

function flush_group(at_end) {
    # at_end: no line follows the run
    if (ngroup == 0)
        return
    if (group_code && !group_compound) {
        # after a closing marker the previous group left on this line
        grouped[1] = substr(grouped[1], 1, group_open_at) "/**@{*/" substr(grouped[1], group_open_at + 1)
        for (k = 1; k <= ngroup; k++)
            print grouped[k]
        if (at_end)
            print "/**@}*/"
        else
            pending_close = 1
    } else {
        # a comment with no declaration below it (a section heading)
        # documents nothing: it stays a plain comment
        if (!group_code)
            grouped[1] = substr(grouped[1], 1, group_open_at) "/*" substr(grouped[1], group_open_at + 4)
        for (k = 1; k <= ngroup; k++)
            print grouped[k]
    }
    ngroup = 0
    group_code = 0
    group_compound = 0
}

function emit(line) {
    if (collecting) {
        grouped[++ngroup] = line
    } else {
        print line
    }
}

BEGIN {
    in_comment = 0
    collecting = 0
    ngroup = 0
    pending_close = 0
    close_prefix = ""
}

{
    line = $0
    starts_margin_comment = 0

    if (in_comment) {
        if (index(line, "*/") > 0)
            in_comment = 0
        line = escape_from(line, 1)
        emit(line)
        next
    }

    # A blank line, or a new comment at the margin, ends a run.
    if (collecting && (line ~ /^[[:space:]]*$/ || line ~ /^\/\*/)) {
        collecting = 0
        flush_group(0)
        if (pending_close && line ~ /^[[:space:]]*$/) {
            print "/**@}*/"
            pending_close = 0
            next
        }
        if (pending_close) {
            # a comment follows the run directly: close the group on its line
            close_prefix = "/**@}*/"
            pending_close = 0
        }
    }

    if (NR == 1 && line ~ /^\/\*/) {
        line = "/** @file" substr(line, 3)
        if (index(line, "*/") == 0)
            in_comment = 1
        print escape_from(line, 10)
        next
    }

    pos = index(line, "/*")
    if (pos > 0 && substr(line, pos, 3) != "/**") {
        before = substr(line, 1, pos - 1)
        text_at = pos + 4
        if (before ~ /^[[:space:]]*$/) {
            line = before "/**" substr(line, pos + 2)
            text_at = pos + 3
            if (pos == 1)
                starts_margin_comment = 1
        } else if (before !~ /^[[:space:]]*#[[:space:]]*(endif|else)/) {
            line = before "/**<" substr(line, pos + 2)
        } else {
            pos = 0
        }
        if (pos > 0) {
            rest = substr(line, pos)
            if (index(substr(rest, 3), "*/") == 0)
                in_comment = 1
            line = escape_from(line, text_at)
        }
    }

    line = close_prefix line
    open_at = length(close_prefix)
    close_prefix = ""
    if (starts_margin_comment) {
        collecting = 1
        group_open_at = open_at
        grouped[++ngroup] = line
        next
    }
    if (collecting && !in_comment) {
        if (line ~ /(struct|union|enum)[^;(]*\{/)
            group_compound = 1
        if (line ~ /[a-zA-Z_]/)
            group_code = 1
    }
    emit(line)
}

END {
    collecting = 0
    flush_group(1)
    if (pending_close)
        print "/**@}*/"
}

# Doxygen's INPUT_FILTER for the public headers (see cmake/Doxyfile.in).
#
# The headers document each declaration with an ordinary C block comment:
# above it, or after a member or enumerator on its line. That text is the
# documentation, so this filter prints the header with the comment markers
# doxygen needs and changes nothing else; every line stays where it is, so
# doxygen's file:line messages point into the header:
#   - the banner opening line 1 becomes "/** @file": the file's description;
#   - a comment opening a line becomes "/**" (JAVADOC_AUTOBRIEF makes its
#     first sentence the brief); one after code on its line "/**<";
#   - a comment documents the run of declarations below it, up to a blank
#     line, the next comment, a line with a comment of its own or the end
#     of the enclosing struct (the
#     pgw_params_set_* setters share one; so do "uint32_t a, b; /* x */"):
#     the run becomes a member group, and DISTRIBUTE_GROUP_DOC gives each
#     member the comment;
#   - when that run is a struct, union or enum whose body spans lines, the
#     comment documents the type, and the declarations right after its
#     body (the functions that take it) get the same text (\copydoc);
#   - in those comments, characters doxygen reads as commands or markup
#     (\ @ < > & ::) are escaped, so the text shows as written, and the
#     dots of "e.g." and "i.e." do not end the brief.
# Comments inside inline function bodies and initialisers, and those after
# preprocessor directives, are left as they are.

# Every occurrence of 'from' in s replaced by 'to', taken literally (the
# awks disagree on backslashes in gsub's replacement).
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
    # an abbreviation's dot does not end the brief (JAVADOC_AUTOBRIEF)
    s = replace_all(s, "e.g. ", "e.g.\\ ")
    s = replace_all(s, "i.e. ", "i.e.\\ ")
    return s
}

# The line with the comment text from position 'from' up to the comment's
# end (or the line's) escaped; markers and code kept.
function escape_from(line, from,    body, tail, end) {
    body = substr(line, from)
    end = index(body, "*/")
    tail = ""
    if (end > 0) {
        tail = substr(body, end)
        body = substr(body, 1, end - 1)
    }
    return substr(line, 1, from - 1) escape_text(body) tail
}

# 1 when every brace open around this point belongs to a struct, union or
# enum body (or none is open): comments here document declarations.
function at_declaration_level(    i) {
    for (i = 1; i <= nstack; i++)
        if (stack[i] == "b")
            return 0
    return 1
}

# Braces of the code part of a line (its comment removed), pushed and
# popped; an 'extern "C" {' is not counted, nor the '}' that closes it.
function track_braces(code,    i, ch) {
    if (code ~ /extern[[:space:]]+"C"/)
        return
    for (i = 1; i <= length(code); i++) {
        ch = substr(code, i, 1)
        if (ch == "{")
            stack[++nstack] = (code ~ /enum/) ? "e" : (code ~ /(struct|union)/) ? "c" : "b"
        else if (ch == "}" && nstack > 0)
            nstack--
    }
}

# Prints the run, wrapped in a member group when it documents declarations.
# The group's closing marker follows the last line, unless that line ends a
# macro definition (where it would join the macro): then close_marker is
# set and the caller puts it in front of the next line.
function end_run(    k) {
    if (!collecting)
        return
    collecting = 0
    if (run_code && !run_compound) {
        run[1] = substr(run[1], 1, run_open_at - 1) "/**@{*/" substr(run[1], run_open_at)
        if (run_has_define)
            close_marker = "/**@}*/"
        else
            run[nrun] = run[nrun] "/**@}*/"
    } else if (!run_code) {
        # a comment with no declaration below it (a section heading, a
        # note) documents nothing: it stays a plain comment
        run[1] = substr(run[1], 1, run_open_at + 1) substr(run[1], run_open_at + 3)
    }
    for (k = 1; k <= nrun; k++)
        print run[k]
    nrun = 0
}

function emit(line) {
    if (collecting)
        run[++nrun] = line
    else
        print line
}

BEGIN {
    in_comment = 0
    collecting = 0
    nrun = 0
    nstack = 0
    copydoc = ""
}

{
    line = $0

    if (in_comment) {
        if (index(line, "*/") > 0)
            in_comment = 0
        if (doc_comment)
            line = escape_from(line, 1)
        if (!in_comment && wrap_line_pending) {
            line = line "/**@}*/"
            wrap_line_pending = 0
        }
        emit(line)
        next
    }

    blank = (line ~ /^[[:space:]]*$/)
    leading_comment = (line ~ /^[[:space:]]*\/\*/)
    directive = (line ~ /^[[:space:]]*#/)
    # a #define's comment documents it; other directives' name a condition
    plain_directive = directive && line !~ /^[[:space:]]*#[[:space:]]*define/
    closes_level = (line ~ /^[[:space:]]*}/)
    pos = index(line, "/*")
    trailing = (pos > 0 && substr(line, pos, 3) != "/**" && !plain_directive &&
                substr(line, 1, pos - 1) !~ /^[[:space:]]*$/)

    # What ends a run: a blank line, the next leading comment, a line with
    # a comment of its own, a preprocessor conditional or include, the end
    # of the enclosing body.
    if (collecting && nstack == run_depth &&
        (blank || leading_comment || closes_level || (trailing && run_code) ||
         line ~ /^[[:space:]]*#[[:space:]]*(if|ifdef|ifndef|else|elif|endif|include|undef)/))
        end_run()
    if (blank || leading_comment)
        copydoc = ""
    if (close_marker != "") {
        if (blank) {
            print close_marker
            close_marker = ""
            next
        }
        prefix = close_marker
        close_marker = ""
    } else {
        prefix = ""
    }

    if (pos > 0 && substr(line, pos, 3) == "/**")
        pos = 0
    code = (pos > 0) ? substr(line, 1, pos - 1) : line
    doc_comment = 0

    if (NR == 1 && pos == 1) {
        line = "/** @file" substr(line, 3)
        doc_comment = 1
        text_at = 10
    } else if (pos > 0 && !plain_directive && at_declaration_level()) {
        doc_comment = 1
        if (code ~ /^[[:space:]]*$/) {
            line = code "/**" substr(line, pos + 2)
            text_at = pos + 3
        } else {
            line = code "/**<" substr(line, pos + 2)
            text_at = pos + 4
        }
    }
    if (pos > 0 && index(substr(line, pos + 2), "*/") == 0)
        in_comment = 1
    if (doc_comment)
        line = escape_from(line, text_at)

    # After a documented struct: the declarations that follow share its text.
    if (copydoc != "" && nstack == 0 && !leading_comment && !blank && line ~ /^[A-Za-z_#]/)
        line = "/** \\copydoc " copydoc " */" line

    # "type a; /* x */" outside a run: a group of its own, so that in "type
    # a, b; /* x */" a gets x too, and so that a struct's members, every
    # one in a group, are listed in their order (doxygen lists members
    # outside groups first).
    if (!collecting && doc_comment && !directive && code !~ /^[[:space:]]*$/ &&
        code ~ /;[[:space:]]*$/ && (nstack == 0 || stack[nstack] != "e")) {
        line = "/**@{*/" line
        if (in_comment)
            wrap_line_pending = 1
        else
            line = line "/**@}*/"
    }

    depth_before = nstack
    track_braces(code)

    if (collecting && !leading_comment) {
        if (line ~ /[A-Za-z_]/)
            run_code = 1
        if (directive)
            run_has_define = 1
        if (nstack > depth_before && nstack > run_depth && stack[run_depth + 1] != "b" &&
            depth_before == run_depth) {
            # the run is a type with a body: the comment is the type's;
            # comments inside its body start runs of their own
            run_compound = 1
            run_type_depth = run_depth
            emit(prefix line)
            end_run()
            awaiting_type_end = (run_type_depth == 0)
            next
        }
    }

    if (awaiting_type_end && nstack == 0 && closes_level) {
        awaiting_type_end = 0
        if (match(line, /^}[[:space:]]*[A-Za-z_0-9]+[[:space:]]*;/)) {
            copydoc = substr(line, 2, RLENGTH - 2)
            gsub(/[[:space:]]/, "", copydoc)
        }
    }

    if (leading_comment && doc_comment && NR > 1) {
        collecting = 1
        run_depth = nstack
        run_code = 0
        run_compound = 0
        run_has_define = 0
        run_open_at = length(prefix) + index(line, "/**")
        nrun = 0
        run[++nrun] = prefix line
        next
    }
    emit(prefix line)
}

END {
    end_run()
    if (close_marker != "")
        print close_marker
}

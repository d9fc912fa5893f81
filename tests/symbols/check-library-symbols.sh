#!/usr/bin/env bash
# RELIABILITY case 16, the part no input can show: the library never kills,
# exits or signals its host process, never changes its signal dispositions
# and never prints. Checked on what the library's object code calls: no
# undefined symbol of libpgwire.a (the library's own code; libuv and OpenSSL
# are linked beside it) may name a function that ends the process (abort,
# exit, assert's __assert_fail), raises or installs a signal (raise, kill,
# signal, sigaction, sigprocmask, libuv's signal and process functions) or
# prints (printf and friends, stdout, stderr). A runtime test could only
# show the inputs it tries; this shows there is no such call at all.
#
#   check-library-symbols.sh LIBPGWIRE_A
set -euo pipefail
lib=$1
[ -f "$lib" ] || { echo "no library at $lib"; exit 1; }
forbidden='^(abort|exit|_exit|_Exit|quick_exit|atexit|at_quick_exit|__assert_fail|__assert_perror_fail|__assert|raise|kill|killpg|tgkill|pthread_kill|signal|sigaction|sigprocmask|pthread_sigmask|sigset|bsd_signal|sysv_signal|siginterrupt|alarm|setitimer|uv_signal_.*|uv_kill|uv_process_kill|uv_spawn|printf|vprintf|fprintf|vfprintf|dprintf|vdprintf|__printf_chk|__vprintf_chk|__fprintf_chk|__vfprintf_chk|__dprintf_chk|puts|fputs|putchar|putc|fputc|perror|fwrite|psignal|psiginfo|err|errx|warn|warnx|verr|verrx|vwarn|vwarnx|error|error_at_line|syslog|vsyslog|stdout|stderr)$'
undefined=$(nm -u "$lib" | awk 'NF { print $NF }' | sort -u)
[ -n "$undefined" ] || { echo "nm listed no undefined symbol in $lib"; exit 1; }
bad=$(grep -E "$forbidden" <<<"$undefined" || true)
if [ -n "$bad" ]; then
    echo "libpgwire.a calls what a library must never call:"
    for sym in $bad; do
        echo "  $sym, from:"
        nm -A -u "$lib" | awk -v s="$sym" '$NF == s { split($1, f, ":"); print "    " f[2] }' | sort -u
    done
    exit 1
fi
echo "libpgwire.a: $(wc -l <<<"$undefined") undefined symbols, none that ends, signals or prints"

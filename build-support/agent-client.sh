# The resident CLI's client, sourced by ./cairn (the agent: cli/src/main/java/dev/cairn/cli/Agent.java). Bash only:
# a client command must not pay for a JVM to reach the one that is already running.

# cairn_agent_call DIR ARG...  Runs the command in the agent of DIR: returns 0 when the agent ran it (its exit status in
# CAIRN_AGENT_RC, its output already written), 1 when no agent took it (none up, a stale port, a refused request).
cairn_agent_call() {
    local dir="$1" port token id
    shift
    [ -r "$dir/port" ] && [ -r "$dir/token" ] || return 1
    port="$(<"$dir/port")"
    token="$(<"$dir/token")"
    [[ "$port" =~ ^[0-9]+$ ]] || return 1
    { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || return 1
    id="$$-$RANDOM$RANDOM"
    printf '%s\0%s\0%s\0' "$token" "$id" "$#" >&3
    [ $# -eq 0 ] || printf '%s\0' "$@" >&3
    local out=0
    cat <&3 || out=$?
    exec 3<&- 3>&-
    if [ "$out" -ne 0 ]; then
        # whoever read the output stopped reading (`| head`): as a JVM writing into a closed pipe, end quietly
        rm -f "$dir/$id.err"
        CAIRN_AGENT_RC="$out"
        return 0
    fi
    if [ ! -e "$dir/$id.err" ]; then
        return 1 # it never started: the caller runs it
    fi
    if [ ! -f "$dir/$id.rc" ]; then
        rm -f "$dir/$id.err"
        printf 'cairn: the agent stopped in the middle of the command (it may have been done); CAIRN_AGENT=0 runs commands without it\n' >&2
        CAIRN_AGENT_RC=1
        return 0
    fi
    [ -s "$dir/$id.err" ] && cat "$dir/$id.err" >&2
    CAIRN_AGENT_RC="$(<"$dir/$id.rc")"
    rm -f "$dir/$id.err" "$dir/$id.rc"
    return 0
}

# cairn_agent_start DIR IDLE JAVA FLAG... -jar JAR  Starts an agent for DIR in the background (exiting after IDLE
# without a request), unless one is starting.
cairn_agent_start() {
    local dir="$1" idle="$2"
    shift 2
    mkdir -p "$dir" 2>/dev/null && chmod 700 "$dir" 2>/dev/null || return 0
    # one starter at a time; a mark left by a start that failed is taken over after a minute
    [ -d "$dir/starting" ] && [ -n "$(find "$dir/starting" -maxdepth 0 -mmin +1 2>/dev/null)" ] && rmdir "$dir/starting" 2>/dev/null
    mkdir "$dir/starting" 2>/dev/null || return 0
    rm -f "$dir/port"
    nohup "$@" agent --dir "$dir" --idle "$idle" > "$dir/agent.log" 2>&1 < /dev/null &
    disown 2>/dev/null || true
}

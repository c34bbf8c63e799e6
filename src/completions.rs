//! What `fleetc completions SHELL` adds to clap's static script: completion of the fleet's own
//! names (an environment for `apply` and `drift`, `<env>/<cluster>` for `upgrade`, `restore`, `upgrade-plan`,
//! `secrets import` and `talos render`), asked of `fleetc __targets` in the directory the
//! shell is in, so that the names are those of the fleet.kdl there. Shell text only: no
//! structure of fleetc's output is templated here. Bash, zsh and fish; elvish and PowerShell
//! keep clap's static completion.

use clap_complete::Shell;

/// The script to append to clap's for `shell`, if fleetc has one for it.
pub fn fleet_names(shell: Shell) -> Option<&'static str> {
    match shell {
        Shell::Bash => Some(BASH),
        Shell::Zsh => Some(ZSH),
        Shell::Fish => Some(FISH),
        _ => None,
    }
}

const BASH: &str = r#"
# fleetc: the fleet's environments and clusters (`fleetc __targets`), then clap's completion.
_fleetc_fleet_names() {
    local cur="${COMP_WORDS[COMP_CWORD]}" what=""
    case "${COMP_WORDS[1]}:${COMP_CWORD}" in
        apply:2|drift:2) what=environments ;;
        upgrade:2|restore:2|upgrade-plan:2) what=clusters ;;
        secrets:3|talos:3) what=clusters ;;
    esac
    if [[ -n "$what" && "$cur" != -* ]]; then
        COMPREPLY=($(compgen -W "$(fleetc __targets "$what" 2>/dev/null)" -- "$cur"))
        [[ ${#COMPREPLY[@]} -gt 0 ]] && return 0
    fi
    _fleetc "$@"
}
complete -F _fleetc_fleet_names -o nosort -o bashdefault -o default fleetc
"#;

const ZSH: &str = r#"
# fleetc: the fleet's environments and clusters (`fleetc __targets`), then clap's completion.
_fleetc_fleet_names() {
    local what=""
    case "${words[2]}:${CURRENT}" in
        apply:3|drift:3) what=environments ;;
        upgrade:3|restore:3|upgrade-plan:3) what=clusters ;;
        secrets:4|talos:4) what=clusters ;;
    esac
    if [[ -n "$what" && "${words[CURRENT]}" != -* ]]; then
        local -a names
        names=(${(f)"$(fleetc __targets $what 2>/dev/null)"})
        if (( ${#names} )); then
            compadd -a names
            return 0
        fi
    fi
    _fleetc "$@"
}
compdef _fleetc_fleet_names fleetc
"#;

const FISH: &str = r#"
# fleetc: the fleet's environments and clusters (`fleetc __targets`).
complete -c fleetc -n "__fish_seen_subcommand_from apply drift; and test (count (commandline -opc)) -eq 2" -f -a "(fleetc __targets environments 2>/dev/null)"
complete -c fleetc -n "__fish_seen_subcommand_from upgrade restore upgrade-plan; and test (count (commandline -opc)) -eq 2" -f -a "(fleetc __targets clusters 2>/dev/null)"
complete -c fleetc -n "__fish_seen_subcommand_from import render; and test (count (commandline -opc)) -eq 3" -f -a "(fleetc __targets clusters 2>/dev/null)"
"#;

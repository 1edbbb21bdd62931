#!/usr/bin/env bash
# Regenerates the PNG screenshots in this directory from the real binary.
#
#   bash screenshots/generate.sh            # all of them
#   bash screenshots/generate.sh main-80x24 # only the named ones
#
# Each shot runs `fgtop demo --seed 1` in a detached tmux session of a fixed
# size, types the keys a person would, waits (by polling the pane, not by
# sleeping) until the screen shows what the shot is about, captures the pane
# with its colours (`capture-pane -e -p`) and renders that ANSI text to PNG
# with charmbracelet/freeze. freeze is pinned in the separate tools module
# (tools/go.mod) so the main go.mod does not carry it.
#
# The demo is simulated in real time, so two runs give the same kind of
# screen but not the same figures: the seed fixes the workload, not the
# moment of the capture.
#
# Needs: go, tmux, perl (Debian's perl-base); with RASTER=rsvg also
# rsvg-convert and the font freeze embeds, installed (Debian's
# librsvg2-bin and fonts-jetbrains-mono: librsvg does not read the font
# the SVG embeds). Output: screenshots/*.png, and
# the captured ANSI text next to each PNG under $KEEP_ANSI if that is set.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local

work=$(mktemp -d)
sock="fgtop-shots-$$"
tm() { tmux -L "$sock" -f /dev/null "$@"; }
cleanup() { tm kill-server 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

echo "building fgtop and freeze"
if [[ -n "${FGTOP_BIN:-}" ]]; then
	cp "$FGTOP_BIN" "$work/fgtop" # a binary built elsewhere (FGTOP_BIN=path)
else
	go build -o "$work/fgtop" ./cmd/fgtop
fi
(cd tools && go build -o "$work/freeze" github.com/charmbracelet/freeze)

# freeze v0.2.2 draws SGR 38/48 (256 and RGB colours), 30-37, 90-97 and
# 100-107, but ignores 39/49 (back to the default colours) and 40-47, and
# starts every line unstyled, while tmux's capture carries the style from
# one line to the next and uses 39/49 freely. This filter tracks the colours
# and writes them out explicitly after every change and at every line start,
# with the default colours given as "r;g;b". Bold, faint and reverse are not
# drawn by freeze at all; the themes used here do not depend on them.
cat >"$work/norm.pl" <<'EOF'
use strict; use warnings;
my ($FG, $BG) = @ARGV;
my ($fg, $bg) = ("2;$FG", undef);
sub sgr { my $s = "\e[0m\e[38;${fg}m"; $s .= "\e[48;${bg}m" if defined $bg; $s }
while (my $line = <STDIN>) {
  chomp $line;
  my $out = sgr();
  while ($line =~ /\G(?:\e\[([0-9;:]*)m|([^\e]+)|(\e[^m]*m?))/gc) {
    if (defined $2) { $out .= $2; next }
    next if defined $3;
    my @p = split /[;:]/, ($1 eq '' ? '0' : $1);
    while (@p) {
      my $v = shift @p;
      if    ($v == 0)                { ($fg, $bg) = ("2;$FG", undef) }
      elsif ($v == 39)               { $fg = "2;$FG" }
      elsif ($v == 49)               { $bg = undef }
      elsif ($v >= 30 && $v <= 37)   { $fg = "5;" . ($v - 30) }
      elsif ($v >= 90 && $v <= 97)   { $fg = "5;" . ($v - 90 + 8) }
      elsif ($v >= 40 && $v <= 47)   { $bg = "5;" . ($v - 40) }
      elsif ($v >= 100 && $v <= 107) { $bg = "5;" . ($v - 100 + 8) }
      elsif ($v == 38 || $v == 48) {
        my $k = shift(@p) // 0;
        my $c = $k == 5 ? "5;" . (shift(@p) // 0) : "2;" . join(';', splice(@p, 0, 3));
        if ($v == 38) { $fg = $c } else { $bg = $c }
      }
    }
    $out .= sgr();
  }
  print "$out\n";
}
EOF

# wait_for RE [SECONDS]: poll the pane until a line matches RE (extended regex).
wait_for() {
	local re=$1 limit=${2:-60} i
	for ((i = 0; i < limit * 5; i++)); do
		if tm capture-pane -p -t shot 2>/dev/null | grep -Eq -- "$re"; then return 0; fi
		sleep 0.2
	done
	echo "timed out waiting for /$re/ in:" >&2
	tm capture-pane -p -t shot >&2 || true
	return 1
}

# settle: wait until the bottom line shows the key hints again: a flash
# about a torn resource.txt (the demo's agents write some files in two
# pieces on purpose, as a slow agent does) replaces them for 6 s.
settle() {
	local i
	for ((i = 0; i < 400; i++)); do
		if ! tm capture-pane -p -t shot | tail -n 1 | grep -Eq -- "new issue"; then return 0; fi
		sleep 0.1
	done
}

# shot NAME COLS ROWS THEME "DEMO FLAGS" KEY... : one screenshot. A KEY
# "wait:RE" waits for RE on the screen instead of typing; "hold:N" lets N
# seconds pass (the history graphs fill with time, and nothing on the
# screen says how much they hold). THEME is dark or light: it picks the
# default colours freeze paints with.
shot() {
	local name=$1 cols=$2 rows=$3 theme=$4 flags=$5
	shift 5
	if ((${#only[@]})) && [[ " ${only[*]} " != *" $name "* ]]; then return 0; fi
	echo "shot $name (${cols}x$rows, $theme)"
	tm kill-server 2>/dev/null || true
	# shellcheck disable=SC2086 # flags are words on purpose
	tm new-session -d -s shot -x "$cols" -y "$rows" \
		"TERM=tmux-256color exec $work/fgtop demo --seed 1 --speed 2 $flags"
	wait_for '[0-9]+\.[0-9]{2}/1\.00' 60
	# Let the simulated agents fill the node a little (a few kernels per GPU
	# and some history in the ALLOC column) before any key is typed.
	wait_for '│ ([6-9]|[1-9][0-9]) kernels' 60
	local k
	for k in "$@"; do
		case $k in
		wait:*) wait_for "${k#wait:}" 30 ;;
		hold:*) sleep "${k#hold:}" ;;
		*) tm send-keys -t shot "$k" ;;
		esac
	done
	settle
	local fg bg
	case $theme in
	dark) fg="208;208;208" bg="23;23;23" ;;
	light) fg="38;38;38" bg="250;250;250" ;;
	esac
	tm capture-pane -e -p -t shot >"$work/$name.ansi"
	perl "$work/norm.pl" "$fg" "$bg" <"$work/$name.ansi" >"$work/$name.norm"
	[[ -n "${KEEP_ANSI:-}" ]] && cp "$work/$name.ansi" "$KEEP_ANSI/"
	# An explicit size keeps freeze at scale 1 (it renders 4x when sizing
	# itself). JetBrains Mono (embedded in freeze) advances 0.6 em per cell
	# and its block glyphs are 1.32 em tall (ascent + descent). At that
	# line height stacked blocks (the history graphs, the ALLOC column)
	# meet on fractional pixels and freeze's anti-aliased edges leave a
	# darker hairline between every two rows; 1.25 em (20 px at 16 px)
	# makes each block overlap the next row by about one pixel, so areas
	# are solid. The cost: a partial block (▄) reads about 5 % taller than
	# its share, and text lines are a little tighter than the font's own.
	local fs=16 pad=24 lh=1.25
	local w h
	w=$(awk -v c="$cols" -v f=$fs -v p=$pad 'BEGIN { printf "%d", c * f * 0.6 + 2 * p + 4 }')
	h=$(awk -v r="$rows" -v f=$fs -v p=$pad -v l=$lh 'BEGIN { printf "%d", (r + 0.5) * f * l + 2 * p }')
	# With RASTER=rsvg, freeze writes SVG and librsvg draws the PNG:
	# freeze's own rasterizer faulted on one machine (a SIGSEGV inside it
	# on any input).
	local out="screenshots/$name.png"
	[[ "${RASTER:-}" == rsvg ]] && out="$work/$name.svg"
	"$work/freeze" --language ansi --font.ligatures=false --font.size "$fs" \
		--line-height "$lh" --padding "$pad" --background "#$(printf '%02x%02x%02x' ${bg//;/ })" \
		--width "$w" --height "$h" -o "$out" <"$work/$name.norm" >/dev/null
	[[ "${RASTER:-}" == rsvg ]] && rsvg-convert "$out" -o "screenshots/$name.png"
	chmod 644 "screenshots/$name.png"
	tm kill-server 2>/dev/null || true
}

only=("$@")

# The main screen, wide, with the kernel list showing every kernel (f) and
# the history graphs below. The history is kept per second of snapshot
# time, so a shot taken at once shows one 10 s column: 90 s more give the
# graphs about two minutes of the workload coming and going.
# g first: the cursor starts on the device that most needs a look.
shot main-wide 200 60 dark "" g j f 'wait:^─ Kernels \([0-9]' 'wait: ([5-9]|[1-9][0-9])s [0-9a-f]{8} ok' \
	'wait:^─ History of GPU1' hold:90
# The main screen in a classic 80x24 terminal: the compact layout.
shot main-80x24 80 24 dark ""
# The device detail: Enter on GPU0 (g: the cursor starts on the device
# that most needs a look).
shot device-detail 120 36 dark "" g Enter 'wait:Holdings|Held per slot'
# The help screen.
shot help 120 36 dark "" '?' 'wait:Share bars'
# The partition editor (e) on the demo's slot-based agent.toml (the form
# Backend.AI main loads): agent numa0's cuda.shares lowered from 2.0 to
# 1.5, not yet applied, so the grid shows the draft ("was 2.0"), each
# amount beside the node's capacity, the other agent's amount and what the
# agent's kernels hold, and the verdict of main's loader. 32 rows: the
# grid of the demo's 12 slot rows needs about 20, the rest would be blank.
# The last wait lets the "editing ..." flash give the bottom line back.
# The demo records from its start; after a few seconds of record the line
# under the verdict replays them under the draft (issue 27).
shot editor 160 32 dark "" 'hold:4' e 'wait:^─ Partition' Down Down Down Down Down Down Enter C-u 1.5 Enter \
	'wait:draft: cuda.shares of 1 agent' 'wait:under this draft: [0-9a]' 'wait:^ enter edit amount'
# The light theme, for light terminals.
shot light 120 36 light "--theme light" f 'wait:^─ Kernels \([0-9]'

ls -l screenshots/*.png

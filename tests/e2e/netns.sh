# tests/e2e/netns.sh - sourced by tests and benchmarks that need a small
# network: N nodes, each in a network namespace of its own with a veth to a
# bridge in a namespace of the caller's (named PREFIX-br, the bridge's
# address NET.254), node i in PREFIX-n<i> at NET.<i+1>. Namespaces are named
# with the caller's PREFIX (make it unique: the pid) and removed by
# netns_down. Needs root and iproute2.
#
#   netns_up PREFIX NET N   0, or 1 with the reason in netns.err
#   netns_down PREFIX N

netns_up() {
	_p=$1 _net=$2 _nn=$3
	{ ip netns add "$_p-br" &&
		ip -n "$_p-br" link add br0 type bridge &&
		ip -n "$_p-br" addr add "$_net.254/24" dev br0 &&
		ip -n "$_p-br" link set br0 up &&
		ip -n "$_p-br" link set lo up; } 2> netns.err || return 1
	_i=0
	while [ "$_i" -lt "$_nn" ]; do
		{ ip netns add "$_p-n$_i" &&
			ip link add eth0 netns "$_p-n$_i" type veth peer name "p$_i" netns "$_p-br" &&
			ip -n "$_p-br" link set "p$_i" master br0 &&
			ip -n "$_p-br" link set "p$_i" up &&
			ip -n "$_p-n$_i" addr add "$_net.$((_i + 1))/24" dev eth0 &&
			ip -n "$_p-n$_i" link set eth0 up &&
			ip -n "$_p-n$_i" link set lo up; } 2> netns.err || return 1
		_i=$((_i + 1))
	done
	return 0
}

netns_down() {
	_i=0
	while [ "$_i" -lt "$2" ]; do
		ip netns del "$1-n$_i" 2> /dev/null
		_i=$((_i + 1))
	done
	ip netns del "$1-br" 2> /dev/null
	return 0
}

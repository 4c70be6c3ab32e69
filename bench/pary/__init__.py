"""P-ary search (one query's response time): the plots of pary_bench."""

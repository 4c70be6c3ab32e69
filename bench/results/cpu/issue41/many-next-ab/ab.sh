set -e
for round in 1 2; do
  for tree in /work/main /tmp/wt-next; do
    name=$(basename $tree)
    (cd $tree && PYTHONPATH=python python3 -m bench.selection.selection_cpu_bench --json /tmp/ab_next_${name}_$round.json --sizes 1000000,16777216 --dtypes float32,int32 --dists uniform,normal --ops quantile100 --min-time 0.1 --repeat 5 > /tmp/ab_next_${name}_$round.log 2>&1)
  done
done
echo done

// Metric names in a PromQL expression, for the check that dashboards and alert rules name only
// metrics that exist. Not a PromQL parser: it removes what cannot be a metric name (strings, label
// matchers, ranges, grouping label lists, numbers, durations) and keeps the identifiers that are
// not functions, aggregations or keywords.
const NOT_METRICS = new Set([
  // aggregations and keywords
  'sum', 'min', 'max', 'avg', 'count', 'stddev', 'stdvar', 'topk', 'bottomk', 'quantile', 'count_values', 'group',
  'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset',
  // functions
  'rate', 'irate', 'increase', 'delta', 'idelta', 'deriv', 'histogram_quantile', 'vector', 'scalar', 'abs', 'absent',
  'absent_over_time', 'avg_over_time', 'max_over_time', 'min_over_time', 'sum_over_time', 'count_over_time',
  'last_over_time', 'quantile_over_time', 'changes', 'resets', 'clamp', 'clamp_min', 'clamp_max', 'round', 'time',
  'timestamp', 'label_replace', 'label_join', 'sort', 'sort_desc', 'predict_linear', 'ceil', 'floor', 'exp', 'ln',
  'inf', 'nan',
]);

export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\w+/g, ' ');
  const names = new Set<string>();
  for (const [token] of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) if (!NOT_METRICS.has(token)) names.add(token);
  return [...names];
}

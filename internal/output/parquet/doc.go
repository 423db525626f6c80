// Package parquet writes one Parquet file per domain with records (-f
// parquet; Apache Arrow's writer, zstd, dictionary-encoded strings):
// <prefix>_<name>.parquet, or with the hive layout
// <root>/domain=<name>/rank=<n>/host=<host>/<base>.parquet. Files lists what a Write
// wrote, for run.json.
package parquet

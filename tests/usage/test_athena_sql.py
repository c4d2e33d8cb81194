"""The warehouse's SQL is kept to what DuckDB and Athena (Trino) both accept: each report query,
read by sqlglot (an independent SQL parser) in DuckDB's dialect and in Trino's, means the same
statement; the DDL declares exactly the columns the Parquet files hold and parses as Athena's."""

from __future__ import annotations

import sqlglot

from usage.warehouse import TABLE_COLUMNS, athena_ddl, athena_queries


def test_every_report_query_means_the_same_in_duckdb_and_trino() -> None:
    for name, sql in athena_queries(1772323200, 1775001600).items():
        as_trino = sqlglot.parse_one(sql, read="trino").sql(dialect="trino")
        from_duckdb = sqlglot.transpile(sql, read="duckdb", write="trino")[0]
        assert as_trino == from_duckdb, name


def test_the_ddl_declares_the_files_columns_partitioned_as_they_are() -> None:
    for statement, (table, columns) in zip(athena_ddl("s3://bucket/usage/warehouse/"), TABLE_COLUMNS.items(),
                                           strict=True):
        parsed = sqlglot.parse_one(statement, read="athena")
        declared = [(c.name, c.args["kind"].sql(dialect="athena").upper())  # Athena's string is a VARCHAR
                    for c in parsed.find_all(sqlglot.exp.ColumnDef)]
        expected = [*columns, ("cluster", "VARCHAR"), ("month", "VARCHAR")]
        assert declared == expected, table
        assert f"LOCATION 's3://bucket/usage/warehouse/{table}/'" in statement

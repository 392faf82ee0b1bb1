package floe.tools;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.delta.DeltaLog;
import org.apache.spark.sql.functions;

/**
 * Independent reader used by Floe's integration tests: Apache Spark (local[1]) with Delta Lake's
 * own delta-spark reads a Delta table with {@code spark.read.format("delta").load(path)} and
 * prints its rows as JSON.
 *
 * <pre>
 * DeltaRead TABLE-PATH [--version N]
 * </pre>
 *
 * <p>Output contract:
 *
 * <ul>
 *   <li>stdout line 1: {@code {"schema": <Spark StructType JSON>, "version": V, "count": N}}: the
 *       schema Spark reads (logical names: column mapping resolved), the table version read (N
 *       with --version, else the latest snapshot that load() used) and the number of rows.
 *   <li>stdout lines 2..N+1: one JSON object per row (Spark's JSON generator, the same as
 *       {@code Dataset.toJSON()}), keys in schema order, rows in scan order (not sorted).
 *   <li>stderr: on success the last line is exactly {@code DeltaRead: rows=N startup_ms=S
 *       read_ms=R} (SparkSession start; load + collect); on failure the last line is {@code
 *       DeltaRead: error: <exception class>: <message>} after a stack trace and the exit status is
 *       1; a usage error exits with 2.
 * </ul>
 *
 * <p>Value encoding (Spark's JSON generator; null is always JSON null, null fields are kept):
 * boolean, integers: JSON literals; float/double: JSON numbers (float printed by Float.toString,
 * NaN and infinities as the strings "NaN", "Infinity", "-Infinity"); decimal: a JSON number written
 * from the BigDecimal (keeps its scale: 1.50); string; binary: base64 string; date: "2024-01-02";
 * timestamp (with time zone): "2024-01-02T03:04:05.123456Z" (UTC, always 6 fraction digits);
 * timestamp_ntz: "2024-01-02T03:04:05.123456"; struct: object; array: array; map: object.
 *
 * <p>Why not {@code Dataset.toJSON()} itself: it uses the default JSON formats, which print
 * timestamps with milliseconds only and drop null fields. The rows are written by {@code
 * to_json(struct(*), options)}, the same generator with microsecond formats and nulls kept.
 */
public final class DeltaRead {
  static final Map<String, String> JSON_OPTIONS =
      Map.of(
          "timestampFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX",
          "timestampNTZFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSSSS",
          "dateFormat", "yyyy-MM-dd",
          "ignoreNullFields", "false");

  private DeltaRead() {}

  public static void main(String[] args) {
    String path = null;
    Long version = null;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--version") && i + 1 < args.length) {
        version = Long.parseLong(args[++i]);
      } else if (path == null && !args[i].startsWith("--")) {
        path = args[i];
      } else {
        usage("unexpected argument " + args[i]);
      }
    }
    if (path == null) {
      usage("missing table path");
    }
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    int rc = 0;
    SparkSession spark = null;
    try {
      long t0 = System.nanoTime();
      spark = session();
      long t1 = System.nanoTime();
      DataFrameReader reader = spark.read().format("delta");
      if (version != null) {
        reader = reader.option("versionAsOf", version);
      }
      Dataset<Row> df = reader.load(path);
      long read = version != null
          ? version
          // load() resolved the latest snapshot through the cached DeltaLog of this path.
          : DeltaLog.forTable(spark, path).unsafeVolatileSnapshot().version();
      List<String> rows =
          df.select(functions.to_json(functions.struct(functions.col("*")), JSON_OPTIONS))
              .as(Encoders.STRING())
              .collectAsList();
      long t2 = System.nanoTime();
      out.println("{\"schema\":" + df.schema().json() + ",\"version\":" + read
          + ",\"count\":" + rows.size() + "}");
      for (String row : rows) {
        out.println(row);
      }
      out.flush();
      System.err.println("DeltaRead: rows=" + rows.size() + " startup_ms=" + (t1 - t0) / 1_000_000
          + " read_ms=" + (t2 - t1) / 1_000_000);
    } catch (Throwable e) {
      out.flush();
      e.printStackTrace();
      String msg = String.valueOf(e.getMessage()).replace('\n', ' ');
      System.err.println("DeltaRead: error: " + e.getClass().getName() + ": " + msg);
      rc = 1;
    } finally {
      if (spark != null) {
        spark.stop();
      }
    }
    System.exit(rc);
  }

  static SparkSession session() {
    return SparkSession.builder()
        .master("local[1]")
        .appName("floe-delta-read")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "512m") // informational in local mode: the JVM's -Xmx rules
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.catalogImplementation", "in-memory") // no Hive
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        // Delta rebuilds a snapshot's state with this many shuffle partitions (default 50).
        .config("spark.databricks.delta.snapshotPartitions", "1")
        .config("spark.sql.jsonGenerator.ignoreNullFields", "false")
        .config("spark.sql.debug.maxToStringFields", "1000") // no plan-truncation warning
        .getOrCreate();
  }

  private static void usage(String why) {
    System.err.println("DeltaRead: " + why);
    System.err.println("usage: DeltaRead TABLE-PATH [--version N]");
    System.exit(2);
  }
}

package floe.tools;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

/**
 * Independent Iceberg REST client used by Floe's integration tests: Apache Spark (local[1]) with
 * Apache Iceberg's Spark runtime ({@code org.apache.iceberg.spark.SparkCatalog}, {@code
 * type=rest}) runs SQL statements against an Iceberg REST catalog registered as catalog {@code
 * floe}, so a test can read {@code floe.ns.t} and its metadata tables ({@code floe.ns.t.files},
 * {@code .snapshots}, {@code .history}...) the way a Spark user does.
 *
 * <pre>
 * SparkSql --uri REST-URI [--token TOKEN] [--warehouse W] SQL [SQL...]
 * </pre>
 *
 * <p>Output contract, for each statement in order:
 *
 * <ul>
 *   <li>stdout, one header line: {@code {"statement": I, "schema": <Spark StructType JSON>,
 *       "count": N}} followed by N lines, one JSON object per row (the same encoding as {@link
 *       DeltaRead}: Spark's JSON generator with microsecond timestamps and null fields kept),
 *       rows in the order the statement returns them.
 *   <li>or, when the statement fails, the single line {@code {"statement": I, "error": "<exception
 *       class>", "message": "<message>", "cause": "<innermost cause class>: <message>"}} (no
 *       rows); the run goes on with the next statement, so a
 *       test can check what a client sees for a statement that must fail.
 * </ul>
 *
 * <p>stderr: on completion the last line is exactly {@code SparkSql: statements=K rows=N
 * errors=E startup_ms=S run_ms=R} (SparkSession start; all statements); a failure outside the
 * statements (the session does not start) ends with {@code SparkSql: error: <class>: <message>}
 * and exit status 1; a usage error exits with 2.
 */
public final class SparkSql {
  private SparkSql() {}

  public static void main(String[] args) {
    String uri = null;
    String token = null;
    String warehouse = null;
    List<String> statements = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--uri") && i + 1 < args.length) {
        uri = args[++i];
      } else if (args[i].equals("--token") && i + 1 < args.length) {
        token = args[++i];
      } else if (args[i].equals("--warehouse") && i + 1 < args.length) {
        warehouse = args[++i];
      } else if (args[i].startsWith("--")) {
        usage("unexpected argument " + args[i]);
      } else {
        statements.add(args[i]);
      }
    }
    if (uri == null) {
      usage("missing --uri");
    }
    if (statements.isEmpty()) {
      usage("no SQL statement");
    }
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    int rc = 0;
    SparkSession spark = null;
    try {
      long t0 = System.nanoTime();
      spark = session(uri, token, warehouse);
      long t1 = System.nanoTime();
      long rows = 0;
      int errors = 0;
      for (int i = 0; i < statements.size(); i++) {
        try {
          Dataset<Row> df = spark.sql(statements.get(i));
          List<String> lines =
              df.select(functions.to_json(functions.struct(functions.col("*")),
                      DeltaRead.JSON_OPTIONS))
                  .as(Encoders.STRING())
                  .collectAsList();
          out.println("{\"statement\":" + i + ",\"schema\":" + df.schema().json()
              + ",\"count\":" + lines.size() + "}");
          for (String line : lines) {
            out.println(line);
          }
          rows += lines.size();
        } catch (Exception e) {
          // Spark may wrap the catalog's exception: the outermost is what the user sees, the
          // innermost ("cause") names what the REST client raised; the chain goes to stderr.
          errors++;
          e.printStackTrace();
          Throwable root = e;
          while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
          }
          out.println("{\"statement\":" + i + ",\"error\":" + quote(e.getClass().getName())
              + ",\"message\":" + quote(String.valueOf(e.getMessage()))
              + ",\"cause\":" + quote(root.getClass().getName() + ": " + root.getMessage())
              + "}");
        }
        out.flush();
      }
      long t2 = System.nanoTime();
      System.err.println("SparkSql: statements=" + statements.size() + " rows=" + rows
          + " errors=" + errors + " startup_ms=" + (t1 - t0) / 1_000_000
          + " run_ms=" + (t2 - t1) / 1_000_000);
    } catch (Throwable e) {
      out.flush();
      e.printStackTrace();
      String msg = String.valueOf(e.getMessage()).replace('\n', ' ');
      System.err.println("SparkSql: error: " + e.getClass().getName() + ": " + msg);
      rc = 1;
    } finally {
      if (spark != null) {
        spark.stop();
      }
    }
    System.exit(rc);
  }

  static SparkSession session(String uri, String token, String warehouse) {
    String cat = "spark.sql.catalog.floe";
    SparkSession.Builder b = SparkSession.builder()
        .master("local[1]")
        .appName("floe-spark-sql")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.catalogImplementation", "in-memory") // no Hive
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.jsonGenerator.ignoreNullFields", "false")
        .config("spark.sql.debug.maxToStringFields", "1000")
        .config(cat, "org.apache.iceberg.spark.SparkCatalog")
        .config(cat + ".type", "rest")
        .config(cat + ".uri", uri)
        // Every statement sees the catalog's current state, not a table cached by an earlier one.
        .config(cat + ".cache-enabled", "false");
    if (token != null) {
      b = b.config(cat + ".token", token);
    }
    if (warehouse != null) {
      b = b.config(cat + ".warehouse", warehouse);
    }
    return b.getOrCreate();
  }

  private static String quote(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char ch : s.toCharArray()) {
      switch (ch) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (ch < 0x20) {
            sb.append(String.format("\\u%04x", (int) ch));
          } else {
            sb.append(ch);
          }
        }
      }
    }
    return sb.append('"').toString();
  }

  private static void usage(String why) {
    System.err.println("SparkSql: " + why);
    System.err.println("usage: SparkSql --uri REST-URI [--token TOKEN] [--warehouse W] SQL...");
    System.exit(2);
  }
}

package floe.tools;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.BaseTransaction;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableCommit;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * Exercises an Iceberg REST catalog server through Apache Iceberg's own Java client
 * ({@link RESTCatalog}), used by Floe's integration tests against {@code floe catalog serve}.
 *
 * <pre>
 * RestExercise --uri http://127.0.0.1:8181 [--token T] exercise NAMESPACE
 * RestExercise --uri ... [--token T] write NAMESPACE.TABLE   (creates it, appends ROWS, keeps it)
 * RestExercise --uri ... [--token T] scan NAMESPACE.TABLE    (prints its rows)
 * </pre>
 *
 * <p>Output (stdout, one JSON object per line):
 *
 * <ul>
 *   <li>{@code {"step": NAME, "ok": true, ...details}} after each step that succeeded;
 *   <li>{@code {"table": "ns.t", "row": {...}}} for each scanned row, in IcebergRead's encoding
 *       (see IcebergRead), printed before the step line of that scan;
 *   <li>{@code {"step": NAME, "ok": false, "error": "..."}} for the step that failed, after which
 *       the program exits 1 (stack trace and {@code RestExercise: error: ...} on stderr).
 * </ul>
 *
 * <p>On success the last stderr line is {@code RestExercise: ok}; a usage error exits 2.
 *
 * <p>The exercise creates everything under NAMESPACE (which must not exist) and drops it all at
 * the end. Data files are written with iceberg-data's generic Parquet writer through a local
 * read-write FileIO ({@link LocalRwFileIO}), so the table locations the server hands out must be
 * local paths or {@code file:} URIs.
 */
public final class RestExercise {
  private static final String USAGE =
      "usage: RestExercise --uri URI [--token TOKEN] exercise NAMESPACE\n"
          + "       RestExercise --uri URI [--token TOKEN] write NAMESPACE.TABLE\n"
          + "       RestExercise --uri URI [--token TOKEN] scan NAMESPACE.TABLE";

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonFactory JSON = new JsonFactory();

  /** int, long, string, double, timestamptz, decimal, list, struct. */
  static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.IntegerType.get()),
          Types.NestedField.optional(2, "l", Types.LongType.get()),
          Types.NestedField.optional(3, "s", Types.StringType.get()),
          Types.NestedField.optional(4, "d", Types.DoubleType.get()),
          Types.NestedField.optional(5, "ts", Types.TimestampType.withZone()),
          Types.NestedField.optional(6, "dec", Types.DecimalType.of(10, 2)),
          Types.NestedField.optional(
              7, "tags", Types.ListType.ofOptional(8, Types.StringType.get())),
          Types.NestedField.optional(
              9,
              "st",
              Types.StructType.of(
                  Types.NestedField.required(10, "a", Types.IntegerType.get()),
                  Types.NestedField.optional(11, "b", Types.StringType.get()))));

  private RestExercise() {}

  /** Thrown when the server's behaviour differs from what the REST spec requires. */
  static final class CheckFailed extends RuntimeException {
    CheckFailed(String message) {
      super(message);
    }
  }

  private static final class UsageException extends Exception {
    UsageException(String message) {
      super(message);
    }
  }

  public static void main(String[] args) {
    setIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    setIfAbsent("org.slf4j.simpleLogger.log.org.apache.hadoop", "error");
    setIfAbsent(
        "org.slf4j.simpleLogger.log.org.apache.iceberg.formats.FormatModelRegistry", "warn");
    int status;
    try {
      run(args);
      System.err.println("RestExercise: ok");
      status = 0;
    } catch (UsageException e) {
      System.err.println(USAGE);
      System.err.println("RestExercise: error: " + e.getMessage());
      status = 2;
    } catch (Throwable t) {
      System.out.flush();
      t.printStackTrace(System.err);
      System.err.println("RestExercise: error: " + describe(t));
      status = 1;
    }
    System.out.flush();
    System.err.flush();
    System.exit(status);
  }

  private static void setIfAbsent(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }

  static String describe(Throwable t) {
    StringBuilder sb = new StringBuilder();
    Throwable cur = t;
    for (int depth = 0; cur != null && depth < 5; depth++, cur = cur.getCause()) {
      if (depth > 0) {
        sb.append(" | caused by ");
      }
      sb.append(cur.getClass().getName());
      if (cur.getMessage() != null) {
        sb.append(": ").append(cur.getMessage().replace('\n', ' '));
      }
      if (cur.getCause() == cur) {
        break;
      }
    }
    return sb.toString();
  }

  private static void run(String[] args) throws Exception {
    String uri = null;
    String token = null;
    List<String> positional = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("-h") || a.equals("--help")) {
        throw new UsageException("help requested");
      } else if (a.equals("--uri") || a.equals("--token")) {
        if (i + 1 >= args.length) {
          throw new UsageException("missing value for " + a);
        }
        if (a.equals("--uri")) {
          uri = args[++i];
        } else {
          token = args[++i];
        }
      } else if (a.startsWith("--")) {
        throw new UsageException("unknown option " + a);
      } else {
        positional.add(a);
      }
    }
    if (uri == null) {
      throw new UsageException("missing --uri");
    }
    if (positional.size() != 2) {
      throw new UsageException("expected a command and its argument, got " + positional);
    }
    String command = positional.get(0);
    String arg = positional.get(1);
    final String catalogUri = uri;
    final String catalogToken = token;
    RESTCatalog catalog =
        step(
            "initialize",
            () -> {
              RESTCatalog c = open(catalogUri, catalogToken);
              return c;
            });
    try {
      switch (command) {
        case "exercise":
          new Exercise(catalog, Namespace.of(arg.split("\\."))).run();
          break;
        case "write":
          writeKept(catalog, TableIdentifier.parse(arg));
          break;
        case "scan":
          {
            TableIdentifier id = TableIdentifier.parse(arg);
            step(
                "scan",
                () -> {
                  List<String> rows = scan(catalog.loadTable(id), id.toString());
                  return details("table", id.toString(), "rows", rows.size());
                });
            break;
          }
        default:
          throw new UsageException("unknown command " + command);
      }
    } finally {
      awaitMetricsReports();
      catalog.close();
    }
  }

  /**
   * RESTCatalog posts scan/commit metrics from a background executor; closing the catalog
   * while a report is in flight makes it fail ("Connection pool shut down"). Waits (at most
   * 5 s) until no reporter thread is running a report.
   */
  static void awaitMetricsReports() throws InterruptedException {
    long deadline = System.nanoTime() + 5_000_000_000L;
    Thread.sleep(50);
    while (System.nanoTime() < deadline) {
      boolean busy = false;
      for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
        for (StackTraceElement f : e.getValue()) {
          if (f.getClassName().startsWith("org.apache.iceberg.rest.RESTMetricsReporter")) {
            busy = true;
            break;
          }
        }
      }
      if (!busy) {
        return;
      }
      Thread.sleep(20);
    }
  }

  static RESTCatalog open(String uri, String token) {
    Map<String, String> props = new HashMap<>();
    props.put("uri", uri);
    props.put("io-impl", LocalRwFileIO.class.getName());
    if (token != null) {
      props.put("token", token);
    }
    RESTCatalog catalog = new RESTCatalog();
    catalog.initialize("floe", props);
    return catalog;
  }

  // ---- output -----------------------------------------------------------------------------

  interface Step<T> {
    T call() throws Exception;
  }

  /** Runs one step: prints its success line (details from a returned Map) or its failure. */
  static <T> T step(String name, Step<T> body) throws Exception {
    T result;
    try {
      result = body.call();
    } catch (Throwable t) {
      Map<String, Object> line = new LinkedHashMap<>();
      line.put("step", name);
      line.put("ok", false);
      line.put("error", describe(t));
      emit(line);
      throw t;
    }
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("step", name);
    line.put("ok", true);
    if (result instanceof Map) {
      for (Map.Entry<?, ?> e : ((Map<?, ?>) result).entrySet()) {
        line.put(String.valueOf(e.getKey()), e.getValue());
      }
    }
    emit(line);
    return result;
  }

  /** A mutable map (Iceberg's request builders call containsKey(null), which Map.of rejects). */
  static Map<String, String> props(String... kv) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  static Map<String, Object> details(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      m.put(String.valueOf(kv[i]), kv[i + 1]);
    }
    return m;
  }

  static void emit(Map<String, Object> line) throws IOException {
    System.out.println(MAPPER.writeValueAsString(line));
    System.out.flush();
  }

  static void check(boolean ok, String message, Object... args) {
    if (!ok) {
      throw new CheckFailed(String.format(message, args));
    }
  }

  interface Action {
    void run() throws Exception;
  }

  /** Runs `action`, which must throw `expected`; returns the exception's class name. */
  static String expectThrows(Class<? extends Throwable> expected, String what, Action action) {
    try {
      action.run();
    } catch (Throwable t) {
      if (expected.isInstance(t)) {
        return t.getClass().getSimpleName();
      }
      throw new CheckFailed(
          what + ": expected " + expected.getSimpleName() + " but got " + describe(t));
    }
    throw new CheckFailed(what + ": expected " + expected.getSimpleName() + ", nothing thrown");
  }

  // ---- rows ---------------------------------------------------------------------------------

  static String encode(Types.StructType type, Record record) {
    try {
      StringWriter w = new StringWriter();
      try (JsonGenerator gen = JSON.createGenerator(w)) {
        IcebergRead.writeStruct(gen, type, record);
      }
      return w.toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Record row(
      Schema schema,
      int id,
      Long l,
      String s,
      Double d,
      OffsetDateTime ts,
      String dec,
      List<String> tags,
      Integer stA,
      String stB,
      boolean stNull) {
    GenericRecord r = GenericRecord.create(schema);
    r.setField("id", id);
    r.setField("l", l);
    r.setField("s", s);
    r.setField("d", d);
    r.setField("ts", ts);
    r.setField("dec", dec == null ? null : new BigDecimal(dec));
    r.setField("tags", tags);
    if (!stNull) {
      GenericRecord st = GenericRecord.create(schema.findField("st").type().asStructType());
      st.setField("a", stA);
      st.setField("b", stB);
      r.setField("st", st);
    }
    return r;
  }

  private static OffsetDateTime ts(String iso) {
    return OffsetDateTime.parse(iso).withOffsetSameInstant(ZoneOffset.UTC);
  }

  /** First batch: edge values and nulls. */
  static List<Record> batchA(Schema schema) {
    return List.of(
        row(schema, 1, 1L << 40, "alpha", 1.5, ts("2024-01-02T03:04:05.123456Z"), "12.34",
            List.of("a", "b"), 1, "x", false),
        row(schema, 2, -1L, "", -0.25, ts("1969-12-31T23:59:59.999999Z"), "-0.01",
            List.of(), -2, null, false),
        row(schema, 3, null, null, null, null, null, null, null, null, true),
        row(schema, 4, Long.MAX_VALUE, "\u00fcn\u00efc\u00f8d\u00e9 \u2713", 1e300,
            ts("2038-01-19T05:14:07+02:00"), "99999999.99", Arrays.asList("x", null, "z"),
            Integer.MAX_VALUE, "y", false));
  }

  /** Second batch (a second snapshot). */
  static List<Record> batchB(Schema schema) {
    return List.of(
        row(schema, 5, Long.MIN_VALUE, "beta", -1e-300, ts("2000-02-29T12:00:00Z"), "-99999999.99",
            List.of("only"), Integer.MIN_VALUE, "", false),
        row(schema, 6, 0L, "gamma", 0.0, ts("1970-01-01T00:00:00Z"), "0.00", null, 0, "z",
            false));
  }

  /** Third batch, appended by the multi-table transaction. */
  static List<Record> batchC(Schema schema) {
    return List.of(
        row(schema, 7, 7L, "delta", 7.75, ts("2025-06-30T23:59:59.5Z"), "7.70", List.of("m"), 7,
            "seven", false));
  }

  /** Writes `records` as one Parquet data file under the table's data location. */
  static DataFile writeDataFile(Table table, List<Record> records) throws IOException {
    String location =
        table.locationProvider().newDataLocation("rest-exercise-" + UUID.randomUUID() + ".parquet");
    OutputFile out = table.io().newOutputFile(location);
    DataWriter<Record> writer =
        Parquet.writeData(out)
            .forTable(table)
            .createWriterFunc(GenericParquetWriter::create)
            .overwrite()
            .build();
    try {
      for (Record r : records) {
        writer.write(r);
      }
    } finally {
      writer.close();
    }
    return writer.toDataFile();
  }

  /** Scans with IcebergGenerics; prints each row ({"table", "row"}); returns their encodings. */
  static List<String> scan(Table table, String name) throws IOException {
    List<String> rows = new ArrayList<>();
    Types.StructType type = table.schema().asStruct();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        String enc = encode(type, r);
        rows.add(enc);
        System.out.println("{\"table\":" + MAPPER.writeValueAsString(name) + ",\"row\":" + enc + "}");
      }
    }
    System.out.flush();
    return rows;
  }

  static List<String> encodeAll(Schema schema, List<Record> records) {
    List<String> out = new ArrayList<>();
    for (Record r : records) {
      out.add(encode(schema.asStruct(), r));
    }
    return out;
  }

  static void checkRows(List<String> actual, List<String> expected, String what) {
    List<String> a = new ArrayList<>(actual);
    List<String> e = new ArrayList<>(expected);
    Collections.sort(a);
    Collections.sort(e);
    check(a.equals(e), "%s: scanned rows %s differ from written rows %s", what, a, e);
  }

  static String metadataLocation(Table table) {
    return ((HasTableOperations) table).operations().current().metadataFileLocation();
  }

  static <T> List<T> concat(List<T> a, List<T> b) {
    List<T> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }

  /** `write` command: creates the table (and namespace) and appends batches A and B. */
  static void writeKept(RESTCatalog catalog, TableIdentifier id) throws Exception {
    step(
        "write",
        () -> {
          if (!catalog.namespaceExists(id.namespace())) {
            catalog.createNamespace(id.namespace());
          }
          Table table = catalog.createTable(id, SCHEMA, PartitionSpec.unpartitioned());
          table.newAppend().appendFile(writeDataFile(table, batchA(table.schema()))).commit();
          table.newAppend().appendFile(writeDataFile(table, batchB(table.schema()))).commit();
          table = catalog.loadTable(id);
          List<String> expected =
              encodeAll(table.schema(), concat(batchA(table.schema()), batchB(table.schema())));
          List<String> rows = scan(table, id.toString());
          checkRows(rows, expected, "write " + id);
          return details("table", id.toString(), "rows", rows.size(),
              "location", table.location(), "metadata_location", metadataLocation(table));
        });
  }

  // ---- the exercise -------------------------------------------------------------------------

  private static final class Exercise {
    private final RESTCatalog catalog;
    private final Namespace ns;
    private final Namespace child;
    private final TableIdentifier t1;
    private final TableIdentifier t2;
    private final TableIdentifier t3;
    private final TableIdentifier renamed;
    private final TableIdentifier registered;
    private final TableIdentifier missing;
    private List<String> rowsT1;

    Exercise(RESTCatalog catalog, Namespace ns) {
      this.catalog = catalog;
      this.ns = ns;
      String[] levels = Arrays.copyOf(ns.levels(), ns.length() + 1);
      levels[ns.length()] = "child";
      this.child = Namespace.of(levels);
      this.t1 = TableIdentifier.of(ns, "t1");
      this.t2 = TableIdentifier.of(ns, "t2_staged");
      this.t3 = TableIdentifier.of(ns, "t3_stale");
      this.renamed = TableIdentifier.of(ns, "t1_renamed");
      this.registered = TableIdentifier.of(ns, "t1_registered");
      this.missing = TableIdentifier.of(ns, "no_such_table");
    }

    private static List<String> names(List<Namespace> namespaces) {
      List<String> out = new ArrayList<>();
      for (Namespace n : namespaces) {
        out.add(n.toString());
      }
      Collections.sort(out);
      return out;
    }

    private static List<String> tableNames(List<TableIdentifier> ids) {
      List<String> out = new ArrayList<>();
      for (TableIdentifier id : ids) {
        out.add(id.toString());
      }
      Collections.sort(out);
      return out;
    }

    void run() throws Exception {
      step(
          "list_namespaces_before",
          () -> {
            List<Namespace> top = catalog.listNamespaces();
            check(!top.contains(ns), "namespace %s exists before the exercise", ns);
            check(!catalog.namespaceExists(ns), "namespaceExists(%s) before creating it", ns);
            return details("namespaces", names(top));
          });

      Map<String, String> nsProps = new HashMap<>();
      nsProps.put("owner", "java");
      nsProps.put("purpose", "rest-exercise");
      step(
          "create_namespace",
          () -> {
            catalog.createNamespace(ns, nsProps);
            catalog.createNamespace(child, props("level", "2"));
            String dup =
                expectThrows(
                    AlreadyExistsException.class,
                    "createNamespace twice",
                    () -> catalog.createNamespace(ns, props()));
            return details("namespace", ns.toString(), "child", child.toString(), "duplicate", dup);
          });

      step(
          "list_namespaces",
          () -> {
            List<Namespace> top = catalog.listNamespaces();
            check(top.contains(ns), "listNamespaces() = %s lacks %s", top, ns);
            check(!top.contains(child), "listNamespaces() = %s lists the child %s", top, child);
            List<Namespace> under = catalog.listNamespaces(ns);
            check(
                under.equals(List.of(child)),
                "listNamespaces(%s) = %s, expected [%s]",
                ns,
                under,
                child);
            List<Namespace> leaf = catalog.listNamespaces(child);
            check(leaf.isEmpty(), "listNamespaces(%s) = %s, expected []", child, leaf);
            String missingParent =
                expectThrows(
                    NoSuchNamespaceException.class,
                    "listNamespaces(missing parent)",
                    () -> catalog.listNamespaces(Namespace.of(ns.level(0) + "_missing")));
            return details("top", names(top), "under", names(under), "missing_parent",
                missingParent);
          });

      step(
          "load_namespace_metadata",
          () -> {
            Map<String, String> props = catalog.loadNamespaceMetadata(ns);
            for (Map.Entry<String, String> e : nsProps.entrySet()) {
              check(
                  e.getValue().equals(props.get(e.getKey())),
                  "namespace property %s = %s, expected %s",
                  e.getKey(),
                  props.get(e.getKey()),
                  e.getValue());
            }
            check(
                "2".equals(catalog.loadNamespaceMetadata(child).get("level")),
                "child namespace properties lost");
            String missingNs =
                expectThrows(
                    NoSuchNamespaceException.class,
                    "loadNamespaceMetadata(missing)",
                    () -> catalog.loadNamespaceMetadata(Namespace.of(ns.level(0) + "_missing")));
            return details("properties", new java.util.TreeMap<>(props), "missing", missingNs);
          });

      step(
          "namespace_exists",
          () -> {
            check(catalog.namespaceExists(ns), "namespaceExists(%s) is false", ns);
            check(catalog.namespaceExists(child), "namespaceExists(%s) is false", child);
            Namespace nope = Namespace.of(ns.level(0) + "_missing");
            check(!catalog.namespaceExists(nope), "namespaceExists(%s) is true", nope);
            return details();
          });

      step(
          "set_remove_properties",
          () -> {
            catalog.setProperties(ns, props("k1", "v1", "owner", "java2"));
            Map<String, String> after = catalog.loadNamespaceMetadata(ns);
            check("v1".equals(after.get("k1")) && "java2".equals(after.get("owner")),
                "setProperties not applied: %s", after);
            catalog.removeProperties(ns, new java.util.HashSet<>(List.of("k1", "purpose")));
            Map<String, String> removed = catalog.loadNamespaceMetadata(ns);
            check(!removed.containsKey("k1") && !removed.containsKey("purpose"),
                "removeProperties not applied: %s", removed);
            check("java2".equals(removed.get("owner")), "removeProperties lost owner: %s", removed);
            return details("properties", new java.util.TreeMap<>(removed));
          });

      step(
          "create_table",
          () -> {
            Table table =
                catalog.createTable(
                    t1, SCHEMA, PartitionSpec.unpartitioned(), props("created-by", "java"));
            Schema expected = TypeUtil.assignFreshIds(SCHEMA, new AtomicInteger(0)::incrementAndGet);
            check(
                table.schema().asStruct().equals(expected.asStruct()),
                "created schema %s differs from %s",
                table.schema(),
                expected);
            check("java".equals(table.properties().get("created-by")),
                "table property created-by missing: %s", table.properties());
            check(table.currentSnapshot() == null, "new table has a snapshot");
            String dup =
                expectThrows(
                    AlreadyExistsException.class,
                    "createTable twice",
                    () -> catalog.createTable(t1, SCHEMA));
            String noNs =
                expectThrows(
                    NoSuchNamespaceException.class,
                    "createTable in a missing namespace",
                    () ->
                        catalog.createTable(
                            TableIdentifier.of(ns.level(0) + "_missing", "t"), SCHEMA));
            return details("table", t1.toString(), "location", table.location(),
                "format_version", ((HasTableOperations) table).operations().current()
                    .formatVersion(), "duplicate", dup, "missing_namespace", noNs);
          });

      step(
          "append",
          () -> {
            Table table = catalog.loadTable(t1);
            DataFile a = writeDataFile(table, batchA(table.schema()));
            table.newAppend().appendFile(a).commit();
            DataFile b = writeDataFile(table, batchB(table.schema()));
            table.newAppend().appendFile(b).commit();
            return details("files", List.of(a.location(), b.location()),
                "records", a.recordCount() + b.recordCount());
          });

      step(
          "load_table_scan",
          () -> {
            Table table = catalog.loadTable(t1);
            int snapshots = 0;
            for (Object s : table.snapshots()) {
              snapshots++;
            }
            check(snapshots == 2, "expected 2 snapshots, found %d", snapshots);
            rowsT1 = scan(table, t1.toString());
            checkRows(rowsT1,
                encodeAll(table.schema(), concat(batchA(table.schema()), batchB(table.schema()))),
                "scan " + t1);
            return details("table", t1.toString(), "rows", rowsT1.size(), "snapshots", snapshots,
                "metadata_location", metadataLocation(table));
          });

      step(
          "stage_create",
          () -> {
            Transaction txn =
                catalog
                    .buildTable(t2, SCHEMA)
                    .withProperty("staged", "true")
                    .createTransaction();
            check(!catalog.tableExists(t2), "staged table %s exists before commit", t2);
            DataFile f = writeDataFile(txn.table(), batchA(txn.table().schema()));
            txn.newAppend().appendFile(f).commit();
            check(!catalog.tableExists(t2), "staged table %s exists before commitTransaction", t2);
            txn.commitTransaction();
            check(catalog.tableExists(t2), "staged table %s missing after commit", t2);
            Table table = catalog.loadTable(t2);
            check("true".equals(table.properties().get("staged")), "staged property missing");
            List<String> rows = scan(table, t2.toString());
            checkRows(rows, encodeAll(table.schema(), batchA(table.schema())), "scan " + t2);
            return details("table", t2.toString(), "rows", rows.size());
          });

      step(
          "list_tables",
          () -> {
            List<String> tables = tableNames(catalog.listTables(ns));
            List<String> expected = tableNames(List.of(t1, t2));
            check(tables.equals(expected), "listTables(%s) = %s, expected %s", ns, tables,
                expected);
            check(catalog.listTables(child).isEmpty(), "listTables(%s) not empty", child);
            return details("tables", tables);
          });

      step(
          "table_exists",
          () -> {
            check(catalog.tableExists(t1), "tableExists(%s) is false", t1);
            check(!catalog.tableExists(missing), "tableExists(%s) is true", missing);
            String notFound =
                expectThrows(
                    NoSuchTableException.class,
                    "loadTable(missing)",
                    () -> catalog.loadTable(missing));
            return details("missing", notFound);
          });

      step(
          "stale_commit",
          () -> {
            catalog.createTable(t3, SCHEMA);
            Table a = catalog.loadTable(t3);
            Table b = catalog.loadTable(t3);
            TableOperations opsB = ((HasTableOperations) b).operations();
            TableMetadata stale = opsB.current();
            a.updateSchema().addColumn("x1", Types.IntegerType.get()).commit();
            List<Types.NestedField> cols = new ArrayList<>(stale.schema().columns());
            int newId = stale.lastColumnId() + 1;
            cols.add(Types.NestedField.optional(newId, "x2", Types.IntegerType.get()));
            TableMetadata update =
                TableMetadata.buildFrom(stale).setCurrentSchema(new Schema(cols), newId).build();
            String conflict =
                expectThrows(
                    CommitFailedException.class,
                    "commit on a stale base",
                    () -> opsB.commit(stale, update));
            Schema now = catalog.loadTable(t3).schema();
            check(now.findField("x1") != null && now.findField("x2") == null,
                "after the stale commit the schema is %s", now);
            check(catalog.dropTable(t3, true), "dropTable(%s) returned false", t3);
            return details("conflict", conflict);
          });

      step(
          "rename_table",
          () -> {
            catalog.renameTable(t1, renamed);
            check(!catalog.tableExists(t1), "%s still exists after rename", t1);
            check(catalog.tableExists(renamed), "%s missing after rename", renamed);
            List<String> rows = scan(catalog.loadTable(renamed), renamed.toString());
            checkRows(rows, rowsT1, "scan " + renamed);
            String missingSrc =
                expectThrows(
                    NoSuchTableException.class,
                    "renameTable(missing)",
                    () -> catalog.renameTable(missing, TableIdentifier.of(ns, "whatever")));
            String existingDst =
                expectThrows(
                    AlreadyExistsException.class,
                    "renameTable onto an existing table",
                    () -> catalog.renameTable(renamed, t2));
            return details("from", t1.toString(), "to", renamed.toString(), "rows", rows.size(),
                "missing_source", missingSrc, "existing_destination", existingDst);
          });

      step(
          "register_table",
          () -> {
            // One location belongs to one table: a live table's metadata under a second
            // name is refused (Floe answers 409).
            String live = metadataLocation(catalog.loadTable(renamed));
            String sameLocation =
                expectThrows(
                    AlreadyExistsException.class,
                    "registerTable of a live table's metadata under another name",
                    () -> catalog.registerTable(registered, live));
            // A table dropped without purge is registered back under a new name.
            Table source = catalog.createTable(t3, SCHEMA);
            DataFile a = writeDataFile(source, batchA(source.schema()));
            source.newAppend().appendFile(a).commit();
            DataFile b = writeDataFile(source, batchB(source.schema()));
            source.newAppend().appendFile(b).commit();
            String metadata = metadataLocation(catalog.loadTable(t3));
            check(catalog.dropTable(t3, false), "dropTable(%s, false) returned false", t3);
            Table table = catalog.registerTable(registered, metadata);
            check(metadata.equals(metadataLocation(table)),
                "registered table points at %s, not %s", metadataLocation(table), metadata);
            List<String> rows = scan(catalog.loadTable(registered), registered.toString());
            checkRows(rows, rowsT1, "scan " + registered);
            String dup =
                expectThrows(
                    AlreadyExistsException.class,
                    "registerTable on an existing name",
                    () -> catalog.registerTable(registered, metadata));
            return details("table", registered.toString(), "metadata_location", metadata,
                "rows", rows.size(), "duplicate", dup, "same_location", sameLocation);
          });

      multiTable();

      step(
          "drop_namespace_not_empty",
          () -> {
            String notEmpty =
                expectThrows(
                    NamespaceNotEmptyException.class,
                    "dropNamespace(non-empty)",
                    () -> catalog.dropNamespace(ns));
            check(catalog.namespaceExists(ns), "non-empty namespace was dropped");
            return details("error", notEmpty);
          });

      step(
          "drop_table",
          () -> {
            Table table = catalog.loadTable(registered);
            String metadata = metadataLocation(table);
            check(catalog.dropTable(registered, false), "dropTable(%s, false) returned false",
                registered);
            check(!catalog.tableExists(registered), "%s exists after drop", registered);
            boolean kept = Files.exists(LocalRwFileIO.path(metadata));
            check(kept, "dropTable without purge deleted %s", metadata);
            check(!catalog.dropTable(registered, false), "second dropTable returned true");
            check(!catalog.dropTable(missing, false), "dropTable(missing) returned true");
            return details("table", registered.toString(), "metadata_location", metadata,
                "metadata_exists_after", kept);
          });

      step(
          "purge_table",
          () -> {
            Table table = catalog.loadTable(renamed);
            String metadata = metadataLocation(table);
            List<String> dataFiles = new ArrayList<>();
            try (CloseableIterable<org.apache.iceberg.FileScanTask> tasks =
                table.newScan().planFiles()) {
              for (org.apache.iceberg.FileScanTask t : tasks) {
                dataFiles.add(t.file().location());
              }
            }
            check(catalog.dropTable(renamed, true), "dropTable(%s, true) returned false", renamed);
            check(!catalog.tableExists(renamed), "%s exists after purge", renamed);
            Table staged = catalog.loadTable(t2);
            String stagedMetadata = metadataLocation(staged);
            check(catalog.dropTable(t2, true), "dropTable(%s, true) returned false", t2);
            List<String> remaining = new ArrayList<>();
            for (String f : dataFiles) {
              if (Files.exists(LocalRwFileIO.path(f))) {
                remaining.add(f);
              }
            }
            return details("table", renamed.toString(), "metadata_location", metadata,
                "data_files", dataFiles, "data_files_remaining", remaining,
                "metadata_exists_after", Files.exists(LocalRwFileIO.path(metadata)),
                "staged_metadata_location", stagedMetadata);
          });

      step(
          "drop_namespace",
          () -> {
            check(catalog.listTables(ns).isEmpty(), "tables left: %s", catalog.listTables(ns));
            check(catalog.dropNamespace(child), "dropNamespace(%s) returned false", child);
            check(catalog.dropNamespace(ns), "dropNamespace(%s) returned false", ns);
            check(!catalog.namespaceExists(ns), "%s exists after drop", ns);
            check(!catalog.listNamespaces().contains(ns), "%s still listed after drop", ns);
            check(!catalog.dropNamespace(ns), "second dropNamespace returned true");
            return details("namespace", ns.toString());
          });
    }

    /** RESTCatalog.commitTransaction: one conflicting commit changes nothing, then one works. */
    private void multiTable() throws Exception {
      step(
          "multi_table_commit_conflict",
          () -> {
            Table first = catalog.loadTable(renamed);
            Table second = catalog.loadTable(t2);
            Transaction txnA = first.newTransaction();
            txnA.updateProperties().set("multi", "conflict").commit();
            Transaction txnB = second.newTransaction();
            txnB.updateSchema().addColumn("mt_b", Types.StringType.get()).commit();
            // Someone else changes t2's schema first: txnB's requirements no longer hold.
            catalog.loadTable(t2).updateSchema().addColumn("mt_c", Types.StringType.get())
                .commit();
            TableCommit ca = commitOf(renamed, txnA);
            TableCommit cb = commitOf(t2, txnB);
            String conflict =
                expectThrows(
                    CommitFailedException.class,
                    "commitTransaction with a stale table",
                    () -> catalog.commitTransaction(ca, cb));
            check(!catalog.loadTable(renamed).properties().containsKey("multi"),
                "the failed multi-table commit changed %s", renamed);
            Schema t2Schema = catalog.loadTable(t2).schema();
            check(t2Schema.findField("mt_b") == null && t2Schema.findField("mt_c") != null,
                "after the failed multi-table commit %s has schema %s", t2, t2Schema);
            return details("conflict", conflict, "requirements",
                ca.requirements().size() + cb.requirements().size());
          });

      step(
          "multi_table_commit",
          () -> {
            Table first = catalog.loadTable(renamed);
            Table second = catalog.loadTable(t2);
            Transaction txnA = first.newTransaction();
            DataFile f = writeDataFile(first, batchC(first.schema()));
            txnA.newAppend().appendFile(f).commit();
            txnA.updateProperties().set("multi", "ok").commit();
            Transaction txnB = second.newTransaction();
            txnB.updateProperties().set("multi", "ok").commit();
            catalog.commitTransaction(commitOf(renamed, txnA), commitOf(t2, txnB));
            Table a = catalog.loadTable(renamed);
            Table b = catalog.loadTable(t2);
            check("ok".equals(a.properties().get("multi")) && "ok".equals(b.properties().get(
                "multi")), "multi-table commit not applied: %s / %s", a.properties(),
                b.properties());
            List<String> rows = scan(a, renamed.toString());
            List<String> expected = new ArrayList<>(rowsT1);
            expected.addAll(encodeAll(a.schema(), batchC(a.schema())));
            checkRows(rows, expected, "scan " + renamed + " after the multi-table commit");
            // The registered table shares the old metadata file and must not have changed.
            List<String> reg = scan(catalog.loadTable(registered), registered.toString());
            checkRows(reg, rowsT1, "scan " + registered + " after the multi-table commit");
            rowsT1 = rows;
            return details("tables", List.of(renamed.toString(), t2.toString()),
                "rows", rows.size());
          });
    }

    private static TableCommit commitOf(TableIdentifier id, Transaction txn) {
      BaseTransaction t = (BaseTransaction) txn;
      return TableCommit.create(id, t.startMetadata(), t.currentMetadata());
    }
  }

  // ---- local read-write FileIO ---------------------------------------------------------------

  /**
   * FileIO over java.nio for local paths and {@code file:} URIs (the REST catalog gives out
   * such locations for a local warehouse). Reads go through IcebergRead's reader.
   */
  public static final class LocalRwFileIO implements FileIO {
    private final IcebergRead.LocalFileIO reader = new IcebergRead.LocalFileIO();
    private Map<String, String> properties = Map.of();

    public LocalRwFileIO() {}

    static Path path(String location) {
      return IcebergRead.LocalFileIO.toPath(location);
    }

    @Override
    public void initialize(Map<String, String> props) {
      this.properties = Map.copyOf(props);
    }

    @Override
    public Map<String, String> properties() {
      return properties;
    }

    @Override
    public InputFile newInputFile(String location) {
      return reader.newInputFile(location);
    }

    @Override
    public InputFile newInputFile(String location, long length) {
      return reader.newInputFile(location, length);
    }

    @Override
    public OutputFile newOutputFile(String location) {
      return new LocalOutputFile(location, this);
    }

    @Override
    public void deleteFile(String location) {
      try {
        Files.deleteIfExists(path(location));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot delete " + location, e);
      }
    }
  }

  private static final class LocalOutputFile implements OutputFile {
    private final String location;
    private final LocalRwFileIO io;

    LocalOutputFile(String location, LocalRwFileIO io) {
      this.location = location;
      this.io = io;
    }

    @Override
    public PositionOutputStream create() {
      return open(false);
    }

    @Override
    public PositionOutputStream createOrOverwrite() {
      return open(true);
    }

    private PositionOutputStream open(boolean overwrite) {
      Path p = LocalRwFileIO.path(location);
      try {
        if (p.getParent() != null) {
          Files.createDirectories(p.getParent());
        }
        OutputStream out =
            overwrite
                ? Files.newOutputStream(p, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)
                : Files.newOutputStream(p, StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE);
        return new CountingStream(out);
      } catch (java.nio.file.FileAlreadyExistsException e) {
        throw new org.apache.iceberg.exceptions.AlreadyExistsException(
            "File already exists: %s", location);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot create " + location, e);
      }
    }

    @Override
    public String location() {
      return location;
    }

    @Override
    public InputFile toInputFile() {
      return io.newInputFile(location);
    }
  }

  private static final class CountingStream extends PositionOutputStream {
    private final OutputStream out;
    private long pos = 0;

    CountingStream(OutputStream out) {
      this.out = new java.io.BufferedOutputStream(out, 1 << 16);
    }

    @Override
    public long getPos() {
      return pos;
    }

    @Override
    public void write(int b) throws IOException {
      out.write(b);
      pos++;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
      pos += len;
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }
}

package floe.tools;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Independent reader used by Floe's integration tests: opens an Iceberg table with Apache
 * Iceberg's own Java libraries (JdbcCatalog over SQLite, or a metadata JSON file directly), scans
 * it with {@code IcebergGenerics} (delete files applied) and prints one JSON object per row.
 *
 * <pre>
 * IcebergRead --catalog-uri jdbc:sqlite:/path/catalog.db --catalog-name NAME --warehouse /path/wh
 *             --table ns.table [--snapshot-id N]
 * IcebergRead --metadata /path/to/00001-uuid.metadata.json [--snapshot-id N]
 * </pre>
 *
 * <p>Output contract:
 *
 * <ul>
 *   <li>stdout: one JSON object per row, UTF-8, one line each; keys are the field names of the
 *       scanned schema (the snapshot's schema with --snapshot-id, else the current one) in schema
 *       order. Row order is the scan order (not sorted).
 *   <li>stderr: on success the last line is exactly {@code IcebergRead: rows=N}; on failure the
 *       last line is {@code IcebergRead: error: <exception class>: <message>} (after a stack
 *       trace) and the exit status is 1; a usage error exits with 2.
 *   <li>The JDBC catalog is opened read-only in spirit: it never creates or migrates catalog
 *       tables, and the FileIO refuses writes and deletes.
 * </ul>
 *
 * <p>Value encoding (by the Iceberg type of the field, null is always JSON null):
 *
 * <ul>
 *   <li>boolean: true/false. int, long: JSON integer.
 *   <li>double: JSON number (Java Double.toString, which round-trips exactly). float: widened
 *       exactly to double and printed the same way (so 0.1f prints 0.10000000149011612). NaN and
 *       infinities are the strings "NaN", "Infinity", "-Infinity".
 *   <li>decimal(P,S): string, BigDecimal.toPlainString() (always S digits after the point, e.g.
 *       "-12.50" for decimal(9,2), "7" for scale 0).
 *   <li>string: string. uuid: string, lowercase canonical 8-4-4-4-12.
 *   <li>binary, fixed(L), geometry, geography: lowercase hex string of the bytes ("" if empty).
 *   <li>date: "yyyy-MM-dd" (ISO_LOCAL_DATE, e.g. "2024-01-02").
 *   <li>time: "HH:mm:ss.SSSSSS", always 6 fractional digits (e.g. "03:04:05.000000").
 *   <li>timestamp: "yyyy-MM-ddTHH:mm:ss.SSSSSS", always 6 fractional digits, no zone
 *       (e.g. "2024-01-02T03:04:05.123456").
 *   <li>timestamptz: converted to UTC, "yyyy-MM-ddTHH:mm:ss.SSSSSSZ", always 6 fractional digits
 *       and a literal Z (e.g. "2024-01-02T03:04:05.123456Z").
 *   <li>timestamp_ns / timestamptz_ns: the same with 9 fractional digits.
 *   <li>struct: JSON object of its fields in schema order. list: JSON array.
 *   <li>map: JSON array of [key, value] pairs in file order (keys may be any type).
 *   <li>variant: string, Iceberg's Variant.toString() (not a stable format). unknown: null.
 * </ul>
 */
public final class IcebergRead {
  private static final String USAGE =
      "usage: IcebergRead --catalog-uri jdbc:sqlite:/path/catalog.db --catalog-name NAME"
          + " --warehouse /path/wh --table ns.table [--snapshot-id N]\n"
          + "       IcebergRead --metadata /path/to/xxx.metadata.json [--snapshot-id N]";

  private static final DateTimeFormatter DATE = DateTimeFormatter.ISO_LOCAL_DATE;
  private static final DateTimeFormatter TIME_MICROS = timeFormatter(6);
  private static final DateTimeFormatter TIME_NANOS = timeFormatter(9);
  private static final DateTimeFormatter TS_MICROS = timestampFormatter(6);
  private static final DateTimeFormatter TS_NANOS = timestampFormatter(9);
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private IcebergRead() {}

  private static DateTimeFormatter timeFormatter(int digits) {
    return new DateTimeFormatterBuilder()
        .appendValue(ChronoField.HOUR_OF_DAY, 2)
        .appendLiteral(':')
        .appendValue(ChronoField.MINUTE_OF_HOUR, 2)
        .appendLiteral(':')
        .appendValue(ChronoField.SECOND_OF_MINUTE, 2)
        .appendFraction(ChronoField.NANO_OF_SECOND, digits, digits, true)
        .toFormatter(Locale.ROOT);
  }

  private static DateTimeFormatter timestampFormatter(int digits) {
    return new DateTimeFormatterBuilder()
        .append(DateTimeFormatter.ISO_LOCAL_DATE)
        .appendLiteral('T')
        .append(timeFormatter(digits))
        .toFormatter(Locale.ROOT);
  }

  /** Bad command line: exit status 2. */
  private static final class UsageException extends Exception {
    UsageException(String message) {
      super(message);
    }
  }

  public static void main(String[] args) {
    // Quiet logging (slf4j-simple on stderr): warnings only, and not the JDBC catalog's
    // "views are not supported by this schema version" notice nor Hadoop's native-library one.
    setIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    setIfAbsent("org.slf4j.simpleLogger.log.org.apache.iceberg.jdbc.JdbcCatalog", "error");
    setIfAbsent("org.slf4j.simpleLogger.log.org.apache.hadoop", "error");
    setIfAbsent("org.slf4j.simpleLogger.log.org.apache.iceberg.formats.FormatModelRegistry", "warn");
    int status;
    try {
      long rows = run(args);
      System.err.println("IcebergRead: rows=" + rows);
      status = 0;
    } catch (UsageException e) {
      System.err.println(USAGE);
      System.err.println("IcebergRead: error: " + e.getMessage());
      status = 2;
    } catch (Throwable t) {
      System.out.flush();
      t.printStackTrace(System.err);
      System.err.println("IcebergRead: error: " + describe(t));
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

  private static String describe(Throwable t) {
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

  private static long run(String[] args) throws Exception {
    Map<String, String> opts = parseArgs(args);
    Long snapshotId = null;
    if (opts.containsKey("snapshot-id")) {
      try {
        snapshotId = Long.parseLong(opts.get("snapshot-id"));
      } catch (NumberFormatException e) {
        throw new UsageException("--snapshot-id is not an integer: " + opts.get("snapshot-id"));
      }
    }

    if (opts.containsKey("metadata")) {
      for (String k : new String[] {"catalog-uri", "catalog-name", "warehouse", "table"}) {
        if (opts.containsKey(k)) {
          throw new UsageException("--metadata cannot be combined with --" + k);
        }
      }
      String location = opts.get("metadata");
      LocalFileIO io = new LocalFileIO();
      if (!io.newInputFile(location).exists()) {
        throw new FileNotFoundException("metadata file not found: " + location);
      }
      StaticTableOperations ops = new StaticTableOperations(location, io);
      Table table = new BaseTable(ops, location);
      try {
        return scan(table, snapshotId);
      } finally {
        io.close();
      }
    }

    for (String k : new String[] {"catalog-uri", "catalog-name", "warehouse", "table"}) {
      if (!opts.containsKey(k)) {
        throw new UsageException("missing --" + k + " (or use --metadata)");
      }
    }
    String uri = opts.get("catalog-uri");
    if (uri.startsWith("jdbc:sqlite:")) {
      String dbPath = uri.substring("jdbc:sqlite:".length());
      int q = dbPath.indexOf('?');
      if (q >= 0) {
        dbPath = dbPath.substring(0, q);
      }
      if (dbPath.startsWith("file:")) {
        dbPath = LocalFileIO.toPath(dbPath).toString();
      }
      // The SQLite driver would silently create an empty database file.
      if (!dbPath.isEmpty() && !dbPath.equals(":memory:") && !Files.isRegularFile(Paths.get(dbPath))) {
        throw new FileNotFoundException("catalog database not found: " + dbPath);
      }
    }
    Map<String, String> props = new HashMap<>();
    props.put("uri", uri);
    props.put("warehouse", opts.get("warehouse"));
    // Never create or migrate the catalog tables: this is a reader of someone else's catalog
    // (pyiceberg's SqlCatalog / Floe use the V0 layout without the iceberg_type column).
    props.put("jdbc.init-catalog-tables", "false");
    if (uri.startsWith("jdbc:sqlite:")) {
      // Passed to the SQLite driver (prefix "jdbc." stripped): wait for concurrent writers.
      props.put("jdbc.busy_timeout", "10000");
    }
    JdbcCatalog catalog = new JdbcCatalog(p -> new LocalFileIO(), null, false);
    catalog.initialize(opts.get("catalog-name"), props);
    try {
      TableIdentifier id = TableIdentifier.parse(opts.get("table"));
      Table table = catalog.loadTable(id);
      return scan(table, snapshotId);
    } finally {
      catalog.close();
    }
  }

  private static Map<String, String> parseArgs(String[] args) throws UsageException {
    Map<String, String> opts = new HashMap<>();
    List<String> known =
        List.of("catalog-uri", "catalog-name", "warehouse", "table", "snapshot-id", "metadata");
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("-h") || a.equals("--help")) {
        throw new UsageException("help requested");
      }
      if (!a.startsWith("--")) {
        throw new UsageException("unexpected argument: " + a);
      }
      String key = a.substring(2);
      String value = null;
      int eq = key.indexOf('=');
      if (eq >= 0) {
        value = key.substring(eq + 1);
        key = key.substring(0, eq);
      }
      if (!known.contains(key)) {
        throw new UsageException("unknown option --" + key);
      }
      if (value == null) {
        if (i + 1 >= args.length) {
          throw new UsageException("missing value for --" + key);
        }
        value = args[++i];
      }
      if (opts.put(key, value) != null) {
        throw new UsageException("--" + key + " given twice");
      }
    }
    if (opts.isEmpty()) {
      throw new UsageException("no arguments");
    }
    return opts;
  }

  private static long scan(Table table, Long snapshotId) throws IOException {
    IcebergGenerics.ScanBuilder builder = IcebergGenerics.read(table);
    if (snapshotId != null) {
      if (table.snapshot(snapshotId) == null) {
        throw new IllegalArgumentException(
            "snapshot " + snapshotId + " not found in table " + table.name());
      }
      builder = builder.useSnapshot(snapshotId);
    }
    long rows = 0;
    JsonFactory factory = new JsonFactory();
    factory.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
    OutputStream out = new NonClosingStream(System.out);
    try (CloseableIterable<Record> records = builder.build();
        JsonGenerator gen = factory.createGenerator(out, JsonEncoding.UTF8)) {
      gen.setRootValueSeparator(null);
      for (Record record : records) {
        writeStruct(gen, record.struct(), record);
        gen.writeRaw('\n');
        rows++;
      }
      gen.flush();
    }
    System.out.flush();
    if (System.out.checkError()) {
      throw new IOException("error writing to stdout");
    }
    return rows;
  }

  /** Also used by RestExercise, so both tools print rows in the same encoding. */
  static void writeStruct(JsonGenerator gen, Types.StructType type, StructLike struct)
      throws IOException {
    gen.writeStartObject();
    List<Types.NestedField> fields = type.fields();
    for (int i = 0; i < fields.size(); i++) {
      Types.NestedField field = fields.get(i);
      gen.writeFieldName(field.name());
      writeValue(gen, field.type(), struct.get(i, Object.class));
    }
    gen.writeEndObject();
  }

  private static void writeValue(JsonGenerator gen, Type type, Object value) throws IOException {
    if (value == null) {
      gen.writeNull();
      return;
    }
    switch (type.typeId()) {
      case BOOLEAN:
        gen.writeBoolean((Boolean) value);
        return;
      case INTEGER:
      case LONG:
        gen.writeNumber(((Number) value).longValue());
        return;
      case FLOAT:
      case DOUBLE:
        writeDouble(gen, ((Number) value).doubleValue());
        return;
      case DECIMAL:
        gen.writeString(((BigDecimal) value).toPlainString());
        return;
      case STRING:
        gen.writeString(value.toString());
        return;
      case UUID:
        gen.writeString(uuidString(value));
        return;
      case FIXED:
      case BINARY:
      case GEOMETRY:
      case GEOGRAPHY:
        gen.writeString(hex(value));
        return;
      case DATE:
        gen.writeString(DATE.format(asDate(value)));
        return;
      case TIME:
        gen.writeString(TIME_MICROS.format(asTime(value)));
        return;
      case TIMESTAMP:
        gen.writeString(
            timestamp(value, ((Types.TimestampType) type).shouldAdjustToUTC(), TS_MICROS, false));
        return;
      case TIMESTAMP_NANO:
        gen.writeString(
            timestamp(value, ((Types.TimestampNanoType) type).shouldAdjustToUTC(), TS_NANOS, true));
        return;
      case STRUCT:
        writeStruct(gen, type.asStructType(), (StructLike) value);
        return;
      case LIST:
        {
          Type element = type.asListType().elementType();
          gen.writeStartArray();
          for (Object v : (Iterable<?>) value) {
            writeValue(gen, element, v);
          }
          gen.writeEndArray();
          return;
        }
      case MAP:
        {
          Types.MapType map = type.asMapType();
          gen.writeStartArray();
          for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
            gen.writeStartArray();
            writeValue(gen, map.keyType(), e.getKey());
            writeValue(gen, map.valueType(), e.getValue());
            gen.writeEndArray();
          }
          gen.writeEndArray();
          return;
        }
      case UNKNOWN:
        gen.writeNull();
        return;
      case VARIANT:
        gen.writeString(value.toString());
        return;
      default:
        throw new UnsupportedOperationException("cannot encode Iceberg type " + type);
    }
  }

  private static void writeDouble(JsonGenerator gen, double d) throws IOException {
    if (Double.isNaN(d)) {
      gen.writeString("NaN");
    } else if (d == Double.POSITIVE_INFINITY) {
      gen.writeString("Infinity");
    } else if (d == Double.NEGATIVE_INFINITY) {
      gen.writeString("-Infinity");
    } else {
      // Double.toString, e.g. 1.0, -0.0, 1.0E10, 1.0E-5: valid JSON numbers that round-trip.
      gen.writeNumber(Double.toString(d));
    }
  }

  private static String uuidString(Object value) {
    if (value instanceof UUID) {
      return value.toString();
    }
    byte[] b = bytes(value);
    if (b.length != 16) {
      throw new IllegalArgumentException("uuid value has " + b.length + " bytes");
    }
    ByteBuffer bb = ByteBuffer.wrap(b);
    return new UUID(bb.getLong(), bb.getLong()).toString();
  }

  private static byte[] bytes(Object value) {
    if (value instanceof byte[]) {
      return (byte[]) value;
    }
    if (value instanceof ByteBuffer) {
      ByteBuffer bb = ((ByteBuffer) value).duplicate();
      byte[] b = new byte[bb.remaining()];
      bb.get(b);
      return b;
    }
    throw new IllegalArgumentException("not a binary value: " + value.getClass().getName());
  }

  private static String hex(Object value) {
    byte[] b = bytes(value);
    char[] out = new char[b.length * 2];
    for (int i = 0; i < b.length; i++) {
      out[2 * i] = HEX[(b[i] >> 4) & 0xf];
      out[2 * i + 1] = HEX[b[i] & 0xf];
    }
    return new String(out);
  }

  private static LocalDate asDate(Object value) {
    if (value instanceof LocalDate) {
      return (LocalDate) value;
    }
    return LocalDate.ofEpochDay(((Number) value).longValue()); // days since epoch
  }

  private static LocalTime asTime(Object value) {
    if (value instanceof LocalTime) {
      return (LocalTime) value;
    }
    return LocalTime.ofNanoOfDay(((Number) value).longValue() * 1000L); // micros of day
  }

  private static String timestamp(
      Object value, boolean utc, DateTimeFormatter fmt, boolean nanos) {
    LocalDateTime local;
    if (value instanceof OffsetDateTime) {
      local = ((OffsetDateTime) value).withOffsetSameInstant(ZoneOffset.UTC).toLocalDateTime();
    } else if (value instanceof LocalDateTime) {
      local = (LocalDateTime) value;
    } else if (value instanceof Number) {
      long v = ((Number) value).longValue();
      long unitsPerSecond = nanos ? 1_000_000_000L : 1_000_000L;
      long seconds = Math.floorDiv(v, unitsPerSecond);
      long frac = Math.floorMod(v, unitsPerSecond);
      Instant instant = Instant.ofEpochSecond(seconds, nanos ? frac : frac * 1000L);
      local = LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
    } else {
      throw new IllegalArgumentException(
          "not a timestamp value: " + value.getClass().getName());
    }
    String s = fmt.format(local);
    return utc ? s + "Z" : s;
  }

  /** System.out without closing it when the JSON generator closes. */
  private static final class NonClosingStream extends OutputStream {
    private final PrintStream delegate;

    NonClosingStream(PrintStream delegate) {
      this.delegate = delegate;
    }

    @Override
    public void write(int b) {
      delegate.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      delegate.write(b, off, len);
    }

    @Override
    public void flush() {
      delegate.flush();
    }

    @Override
    public void close() {
      delegate.flush();
    }
  }

  /**
   * Read-only FileIO over java.nio for local paths: accepts {@code file:///abs/path},
   * {@code file:/abs/path}, {@code file://localhost/abs/path} and plain paths. Writes and deletes
   * are refused, so the reader can never change the table it verifies.
   */
  public static final class LocalFileIO implements FileIO {
    public LocalFileIO() {}

    static Path toPath(String location) {
      if (location.startsWith("file:")) {
        try {
          URI uri = new URI(location);
          String authority = uri.getRawAuthority();
          if (authority != null && !authority.isEmpty() && !authority.equals("localhost")) {
            throw new IllegalArgumentException("remote file URI not supported: " + location);
          }
          return Paths.get(uri.getPath());
        } catch (URISyntaxException e) {
          // Not a valid URI (e.g. an unescaped space): take the text after the scheme as is.
          String p = location.substring("file:".length());
          if (p.startsWith("//localhost/")) {
            p = p.substring("//localhost".length());
          } else if (p.startsWith("///")) {
            p = p.substring(2);
          }
          return Paths.get(p);
        }
      }
      int colon = location.indexOf("://");
      if (colon > 0 && location.substring(0, colon).matches("[A-Za-z][A-Za-z0-9+.-]*")) {
        throw new IllegalArgumentException("only local files are supported: " + location);
      }
      return Paths.get(location);
    }

    @Override
    public InputFile newInputFile(String location) {
      return new LocalInputFile(location, toPath(location), -1);
    }

    @Override
    public InputFile newInputFile(String location, long length) {
      return new LocalInputFile(location, toPath(location), length);
    }

    @Override
    public OutputFile newOutputFile(String location) {
      throw new UnsupportedOperationException("IcebergRead is read-only: cannot write " + location);
    }

    @Override
    public void deleteFile(String location) {
      throw new UnsupportedOperationException(
          "IcebergRead is read-only: cannot delete " + location);
    }
  }

  private static final class LocalInputFile implements InputFile {
    private final String location;
    private final Path path;
    private final long knownLength;

    LocalInputFile(String location, Path path, long knownLength) {
      this.location = location;
      this.path = path;
      this.knownLength = knownLength;
    }

    @Override
    public long getLength() {
      if (knownLength >= 0) {
        return knownLength;
      }
      try {
        return Files.size(path);
      } catch (NoSuchFileException e) {
        throw new org.apache.iceberg.exceptions.NotFoundException(
            e, "File does not exist: %s", location);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot stat " + location, e);
      }
    }

    @Override
    public SeekableInputStream newStream() {
      try {
        return new LocalSeekableStream(FileChannel.open(path, StandardOpenOption.READ));
      } catch (NoSuchFileException e) {
        throw new org.apache.iceberg.exceptions.NotFoundException(
            e, "File does not exist: %s", location);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot open " + location, e);
      }
    }

    @Override
    public String location() {
      return location;
    }

    @Override
    public boolean exists() {
      return Files.isRegularFile(path);
    }
  }

  private static final class LocalSeekableStream extends SeekableInputStream {
    private final FileChannel channel;
    private long pos = 0;
    private long mark = 0;

    LocalSeekableStream(FileChannel channel) {
      this.channel = channel;
    }

    @Override
    public long getPos() {
      return pos;
    }

    @Override
    public void seek(long newPos) throws IOException {
      if (newPos < 0) {
        throw new EOFException("negative seek position " + newPos);
      }
      pos = newPos;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      int n = read(one, 0, 1);
      return n <= 0 ? -1 : (one[0] & 0xff);
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      int n = channel.read(ByteBuffer.wrap(b, off, len), pos);
      if (n < 0) {
        return -1;
      }
      pos += n;
      return n;
    }

    @Override
    public long skip(long n) throws IOException {
      if (n <= 0) {
        return 0;
      }
      long size = channel.size();
      long skipped = Math.max(0, Math.min(n, size - pos));
      pos += skipped;
      return skipped;
    }

    @Override
    public int available() throws IOException {
      return (int) Math.max(0, Math.min(Integer.MAX_VALUE, channel.size() - pos));
    }

    @Override
    public boolean markSupported() {
      return true;
    }

    @Override
    public synchronized void mark(int readlimit) {
      mark = pos;
    }

    @Override
    public synchronized void reset() {
      pos = mark;
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }
}

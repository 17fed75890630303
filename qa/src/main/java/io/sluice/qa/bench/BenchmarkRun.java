package io.sluice.qa.bench;

import io.sluice.broker.BrokerConfig;
import io.sluice.protocol.tls.ClusterTls;
import io.sluice.protocol.tls.TestCertificates;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The shared frame of a benchmark: parses {@code --quick}, collects parameters and figures, prints a short
 * table and writes {@code qa/target/bench/NAME.json} as
 * {@code {"name": ..., "params": {...}, "results": {"<figure>": <number>, ...}, "ratio": <number>}}.
 * <p>
 * A benchmark is a class {@code io.sluice.qa.bench.<CamelName>Benchmark} with a {@code main}; {@code qa/bench.sh NAME}
 * finds it by that convention ({@code pause-fanout} → {@code PauseFanoutBenchmark}). Typical use:
 * <pre>
 * final BenchmarkRun run = BenchmarkRun.start("transport", args);
 * run.param("window", 128);
 * ... measure, honouring run.quick() ...
 * run.result("project_round_trips_per_s", project).result("raw_round_trips_per_s", raw).ratio(project / raw);
 * run.finish();
 * </pre>
 * Not thread-safe: drive it from the benchmark's main thread.
 */
public final class BenchmarkRun
{
    /** Where reports go; {@code bench.sh} sets it to the absolute {@code qa/target/bench}. */
    public static final String OUTPUT_DIR_PROPERTY = "sluice.bench.dir";

    private final String name;
    private final boolean quick;
    private final boolean tls;
    private final Map<String, Object> params = new LinkedHashMap<>();
    private final Map<String, Number> results = new LinkedHashMap<>();
    private Double ratio;
    private final long startNs = System.nanoTime();

    private BenchmarkRun(final String name, final boolean quick, final boolean tls)
    {
        this.name = name;
        this.quick = quick;
        this.tls = tls;
    }

    /**
     * Parses the command line: {@code --quick}, and {@code --tls} (cluster TLS on, where the benchmark supports it;
     * the report is then {@code NAME-tls.json}, so runs with and without can be compared).
     *
     * @throws IllegalArgumentException naming an unknown argument.
     */
    public static BenchmarkRun start(final String name, final String[] args)
    {
        boolean quick = false;
        boolean tls = false;
        for (final String arg : args)
        {
            if ("--quick".equals(arg))
            {
                quick = true;
            }
            else if ("--tls".equals(arg))
            {
                tls = true;
            }
            else
            {
                throw new IllegalArgumentException("unknown argument '" + arg + "' (usage: bench.sh " + name +
                    " [--quick] [--tls])");
            }
        }
        final BenchmarkRun run = new BenchmarkRun(name, quick, tls);
        run.param("quick", quick);
        run.param("tls", tls);
        System.out.printf(Locale.ROOT, "benchmark %s%s: %d cores, java %s%n",
            name, quick ? " (quick)" : "", Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
        return run;
    }

    /** What a benchmark measures, given its command line; see {@link #runAndExit}. */
    @FunctionalInterface
    public interface Body
    {
        void measure(String[] args) throws Exception;
    }

    /**
     * Runs a benchmark's body as its {@code main} and ends the JVM: status 0 when it finished, 1 with the stack trace
     * when it failed. Brokers (Ratis), the gateway (Tomcat) and OpenSearch leave non-daemon threads behind, which
     * would keep the JVM running after {@code main} returned or threw.
     */
    public static void runAndExit(final String name, final String[] args, final Body body)
    {
        try
        {
            body.measure(args);
        }
        catch (final Throwable e)
        {
            System.err.println("benchmark " + name + " failed: " + e);
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    public String name()
    {
        return name;
    }

    /** Whether {@code --tls} asked for cluster TLS. */
    public boolean tls()
    {
        return tls;
    }

    /**
     * Cluster TLS material for this run when {@code --tls} was given (a CA and one certificate made with openssl in
     * a temporary folder, the same for every process of the benchmark), else null.
     */
    public ClusterTls clusterTls() throws java.io.IOException
    {
        if (!tls)
        {
            return null;
        }
        final Path folder = java.nio.file.Files.createTempDirectory("sluice-bench-tls");
        return ClusterTls.load(TestCertificates.authority(folder, "bench").issue("bench"));
    }

    /** Shorter runs for smoke checks: the whole benchmark must finish in well under a minute. */
    public boolean quick()
    {
        return quick;
    }

    /** Picks the quick or the full value of a setting, and records it as a parameter. */
    public int choose(final String param, final int quickValue, final int fullValue)
    {
        final int value = quick ? quickValue : fullValue;
        param(param, value);
        return value;
    }

    /**
     * The Ratis transport the brokers of this run use: {@code -Dsluice.bench.raft-transport=NETTY} (through
     * BENCH_JAVA_OPTS) to compare with the default gRPC. Recorded as a parameter.
     */
    public BrokerConfig.RaftTransport raftTransport()
    {
        final BrokerConfig.RaftTransport transport =
            BrokerConfig.RaftTransport.valueOf(System.getProperty("sluice.bench.raft-transport", "GRPC"));
        param("raft_transport", transport.name());
        return transport;
    }

    public BenchmarkRun param(final String key, final Object value)
    {
        params.put(key, value);
        return this;
    }

    public BenchmarkRun result(final String figure, final double value)
    {
        results.put(figure, round(value));
        return this;
    }

    public BenchmarkRun result(final String figure, final long value)
    {
        results.put(figure, value);
        return this;
    }

    /** The headline ratio against the in-run baseline. */
    public BenchmarkRun ratio(final double value)
    {
        ratio = round(value);
        return this;
    }

    /** More options for the JVMs a benchmark starts (brokers, gateways), space-separated, to compare a setting in one sitting. */
    public static final String CHILD_JVM_OPTIONS_PROPERTY = "sluice.bench.childJvmOptions";

    /**
     * {@code base} and then the options of {@value #CHILD_JVM_OPTIONS_PROPERTY}, for the JVMs this benchmark starts;
     * recorded as the {@code jvm_options} parameter of the report.
     */
    public List<String> childJvmOptions(final List<String> base)
    {
        final List<String> options = new ArrayList<>(base);
        final String extra = System.getProperty(CHILD_JVM_OPTIONS_PROPERTY, "").trim();
        if (!extra.isEmpty())
        {
            options.addAll(List.of(extra.split("\\s+")));
        }
        param("jvm_options", String.join(" ", options));
        return options;
    }

    /** Prints a progress line prefixed with the elapsed time. */
    public void log(final String format, final Object... args)
    {
        System.out.printf(Locale.ROOT, "[%6.1fs] %s%n", (System.nanoTime() - startNs) / 1e9,
            String.format(Locale.ROOT, format, args));
    }

    /** Prints the table and writes the JSON report; returns where it was written. */
    public Path finish()
    {
        if (ratio == null)
        {
            throw new IllegalStateException("benchmark " + name + " set no ratio");
        }
        printTable();
        final Map<String, Object> report = new LinkedHashMap<>();
        report.put("name", name);
        report.put("params", params);
        report.put("results", results);
        report.put("ratio", ratio);
        final Path dir = Paths.get(System.getProperty(OUTPUT_DIR_PROPERTY, "qa/target/bench"));
        final Path file = dir.resolve(name + (tls ? "-tls" : "") + ".json");
        try
        {
            Files.createDirectories(dir);
            final JsonMapper mapper = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();
            Files.writeString(file, mapper.writeValueAsString(report) + System.lineSeparator());
        }
        catch (final IOException e)
        {
            throw new IllegalStateException("cannot write benchmark report " + file + ": " + e.getMessage(), e);
        }
        System.out.println("report: " + file.toAbsolutePath().normalize());
        return file;
    }

    private void printTable()
    {
        int width = "ratio".length();
        for (final String key : results.keySet())
        {
            width = Math.max(width, key.length());
        }
        for (final String key : params.keySet())
        {
            width = Math.max(width, key.length());
        }
        final String row = "  %-" + width + "s  %s%n";
        System.out.println();
        System.out.println(name + (quick ? " (quick)" : ""));
        System.out.printf(Locale.ROOT, row, "parameter", "value");
        params.forEach((key, value) -> System.out.printf(Locale.ROOT, row, key, value));
        System.out.printf(Locale.ROOT, row, "figure", "value");
        results.forEach((key, value) -> System.out.printf(Locale.ROOT, row, key, format(value)));
        System.out.printf(Locale.ROOT, row, "ratio", format(ratio));
        System.out.println();
    }

    private static String format(final Number value)
    {
        if (value instanceof Double || value instanceof Float)
        {
            final double d = value.doubleValue();
            return Math.abs(d) >= 1000 ? String.format(Locale.ROOT, "%,.0f", d) : String.format(Locale.ROOT, "%.3f", d);
        }
        return String.format(Locale.ROOT, "%,d", value.longValue());
    }

    private static double round(final double value)
    {
        if (Double.isNaN(value) || Double.isInfinite(value))
        {
            throw new IllegalArgumentException("benchmark figure is not a finite number: " + value);
        }
        return Math.abs(value) >= 1000 ? Math.rint(value) : Math.rint(value * 1000) / 1000;
    }
}

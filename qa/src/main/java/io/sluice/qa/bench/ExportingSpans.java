package io.sluice.qa.bench;

import io.sluice.qa.cluster.SluiceCluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The brokers' DEBUG spans of exporting operations ({@code ExportingControl}, enabled by
 * {@code --}{@value #SPAN_LOGGER}{@code =DEBUG}), grouped by operation version: per operation, the pairs that answered,
 * the proposals that committed (one {@code committed_us} line each, on the broker that proposed: the control group
 * commits of the operation), the first commit's time, and the latest pair's arrival-to-applied and -to-obeyed times.
 * Shared by the pause-http and hosts-scale benchmarks.
 */
final class ExportingSpans
{
    static final String SPAN_LOGGER = "logging.level.io.sluice.broker.control.ExportingControl";
    private static final Pattern PAIR_SPAN =
        Pattern.compile("exporting span version=(\\d+) partition=(\\d+) applied_us=(\\d+) obeyed_us=(\\d+)");
    private static final Pattern COMMIT_SPAN = Pattern.compile("exporting span version=(\\d+) committed_us=(\\d+)");

    /** One operation's spans over every broker. */
    record Operation(int pairs, int commits, long firstCommitUs, long appliedUs, long obeyedUs)
    {
    }

    private final List<Operation> operations;

    private ExportingSpans(final List<Operation> operations)
    {
        this.operations = operations;
    }

    /** Each broker's span lines so far, in the order of its log file. */
    static List<List<String>> lines(final SluiceCluster cluster) throws IOException
    {
        final List<List<String>> brokers = new ArrayList<>();
        for (int b = 0; b < cluster.brokerCount(); b++)
        {
            final List<String> lines = new ArrayList<>();
            final Path log = cluster.runDirectory().resolve("logs").resolve("broker-" + b + ".log");
            for (final String line : Files.readAllLines(log))
            {
                if (line.contains("exporting span version="))
                {
                    lines.add(line);
                }
            }
            brokers.add(lines);
        }
        return brokers;
    }

    /** The lines of {@code after} that {@code before} (an earlier {@link #lines} of the same brokers) did not have. */
    static List<String> since(final List<List<String>> before, final List<List<String>> after)
    {
        final List<String> added = new ArrayList<>();
        for (int b = 0; b < after.size(); b++)
        {
            added.addAll(after.get(b).subList(b < before.size() ? before.get(b).size() : 0, after.get(b).size()));
        }
        return added;
    }

    static ExportingSpans parse(final List<String> lines)
    {
        final Map<Long, Integer> pairsOf = new HashMap<>();
        final Map<Long, Long> applied = new HashMap<>();
        final Map<Long, Long> obeyed = new HashMap<>();
        final Map<Long, Long> committed = new HashMap<>();
        final Map<Long, Integer> commits = new HashMap<>();
        for (final String line : lines)
        {
            final Matcher pair = PAIR_SPAN.matcher(line);
            if (pair.find())
            {
                final long version = Long.parseLong(pair.group(1));
                pairsOf.merge(version, 1, Integer::sum);
                applied.merge(version, Long.parseLong(pair.group(3)), Math::max);
                obeyed.merge(version, Long.parseLong(pair.group(4)), Math::max);
                continue;
            }
            final Matcher commit = COMMIT_SPAN.matcher(line);
            if (commit.find())
            {
                final long version = Long.parseLong(commit.group(1));
                committed.merge(version, Long.parseLong(commit.group(2)), Math::min);
                commits.merge(version, 1, Integer::sum);
            }
        }
        final List<Operation> operations = new ArrayList<>();
        pairsOf.forEach((version, pairs) -> operations.add(new Operation(pairs, commits.getOrDefault(version, 0),
            committed.getOrDefault(version, -1L), applied.get(version), obeyed.get(version))));
        return new ExportingSpans(operations);
    }

    /** The operations whose every one of {@code pairs} pairs answered. */
    private List<Operation> of(final int pairs)
    {
        return operations.stream().filter(operation -> operation.pairs() == pairs).toList();
    }

    long operations(final int pairs)
    {
        return of(pairs).size();
    }

    /** Control group commits per operation of {@code pairs} pairs (a duplicate proposal counts; NaN: none seen). */
    double commitsPerOperation(final int pairs)
    {
        final List<Operation> matching = of(pairs);
        return matching.isEmpty() ? Double.NaN :
            matching.stream().mapToInt(Operation::commits).sum() / (double)matching.size();
    }

    /** The most commits any one operation of {@code pairs} pairs took. */
    int maxCommits(final int pairs)
    {
        return of(pairs).stream().mapToInt(Operation::commits).max().orElse(0);
    }

    double commitP50Ms(final int pairs)
    {
        return p50Ms(of(pairs).stream().filter(operation -> operation.firstCommitUs() >= 0)
            .map(Operation::firstCommitUs).toList());
    }

    double appliedP50Ms(final int pairs)
    {
        return p50Ms(of(pairs).stream().map(Operation::appliedUs).toList());
    }

    double obeyedP50Ms(final int pairs)
    {
        return p50Ms(of(pairs).stream().map(Operation::obeyedUs).toList());
    }

    private static double p50Ms(final List<Long> us)
    {
        if (us.isEmpty())
        {
            throw new IllegalStateException("no broker spans of operations of all pairs: is " + SPAN_LOGGER +
                "=DEBUG honoured by the brokers?");
        }
        return Stats.percentile(us.stream().mapToLong(Long::longValue).toArray(), 50) / 1000.0;
    }
}

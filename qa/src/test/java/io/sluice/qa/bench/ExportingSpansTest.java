package io.sluice.qa.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The brokers' span lines as the pause benchmarks read them: an operation's control group commits are its
 * {@code committed_us} lines on every broker (a duplicate proposal shows as a second one), and an operation counts for
 * a size only when that many pairs answered.
 */
class ExportingSpansTest
{
    private static final String PREFIX = "2026-12-03 17:00:00.000 DEBUG [broker-0-admin-1] i.s.b.c.ExportingControl - ";

    @Test
    void eachCommittedProposalOfAnOperationCountsAsOneControlCommit()
    {
        final List<String> brokerZero = List.of(
            span("exporting span version=100 committed_us=9000"),
            pair(100, 1, 9500, 9600), pair(100, 2, 9700, 9800),
            span("exporting span version=200 committed_us=8000"),
            pair(200, 1, 8500, 8600), pair(200, 2, 8700, 8800));
        final List<String> brokerOne = List.of(
            pair(100, 1, 12000, 12500), pair(100, 2, 11000, 13000),
            // a late duplicate: broker 1 proposed operation 200 too
            span("exporting span version=200 committed_us=7000"),
            pair(200, 1, 7100, 7200), pair(200, 2, 7300, 7400),
            pair(300, 1, 5000, 5100), span("exporting span version=300 committed_us=4000"));

        final ExportingSpans spans = ExportingSpans.parse(ExportingSpans.since(
            List.of(List.of(), List.of()), List.of(brokerZero, brokerOne)));

        assertThat(spans.operations(4)).isEqualTo(2);
        assertThat(spans.commitsPerOperation(4)).isEqualTo(1.5);
        assertThat(spans.maxCommits(4)).isEqualTo(2);
        assertThat(spans.commitsPerOperation(1)).isEqualTo(1.0);
        assertThat(spans.commitP50Ms(4)).as("the first commit of each operation, p50").isEqualTo(7.0);
        assertThat(spans.obeyedP50Ms(4)).as("the latest pair of each operation, p50").isEqualTo(8.8);
    }

    @Test
    void onlyTheLinesAddedSinceTheEarlierReadAreCounted()
    {
        final List<String> before = List.of(span("exporting span version=1 committed_us=10"), pair(1, 1, 20, 30));
        final List<String> after = List.of(before.get(0), before.get(1),
            span("exporting span version=2 committed_us=40"), pair(2, 1, 50, 60));

        final ExportingSpans spans = ExportingSpans.parse(ExportingSpans.since(List.of(before), List.of(after)));

        assertThat(spans.operations(1)).isEqualTo(1);
        assertThat(spans.commitsPerOperation(1)).isEqualTo(1.0);
    }

    @Test
    void withoutSpansTheFiguresSayTheDebugLoggerIsMissing()
    {
        final ExportingSpans spans = ExportingSpans.parse(List.of("Started BrokerMode in 7.1 seconds"));

        assertThat(spans.commitsPerOperation(3)).isNaN();
        assertThatThrownBy(() -> spans.commitP50Ms(3)).hasMessageContaining(ExportingSpans.SPAN_LOGGER);
    }

    private static String span(final String text)
    {
        return PREFIX + text;
    }

    private static String pair(final long version, final int partition, final long appliedUs, final long obeyedUs)
    {
        return span("exporting span version=" + version + " partition=" + partition + " applied_us=" + appliedUs +
            " obeyed_us=" + obeyedUs);
    }
}

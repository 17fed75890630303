package io.sluice.qa;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.Json;
import io.sluice.qa.cluster.PairState;
import io.sluice.qa.cluster.SluiceCluster;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import tools.jackson.databind.JsonNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 14, against three broker JVMs and a gateway JVM: the exporting status reads its own writes, and every request
 * is taken exactly as written: a typo in a query parameter or a JSON field, a malformed path, header or encoding,
 * an oversize request, each answers a JSON 4xx and changes nothing (positions, backfills and exporting state
 * compared before and after).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Execution(ExecutionMode.SAME_THREAD)
class RequestsTakenAsWrittenIT
{
    private static final int ROUNDS = 20;

    @RegisterExtension
    static final SharedCluster SHARED = new SharedCluster();

    private static SluiceCluster cluster;

    @BeforeAll
    static void startCluster()
    {
        cluster = SHARED.cluster();
        cluster.awaitPreferredLeaders(); // backfill starts ask each partition's leader
        cluster.awaitLeaders();
        Records.write(cluster, "before", 30);
    }

    // ------------------------------------------------------------------------------------ status reads its writes

    @Test
    @Order(1)
    void twentyTimesInARowTheStatusRightAfterEachAnswerShowsTheNewState()
    {
        for (int round = 0; round < ROUNDS; round++)
        {
            assertStateRightAfter("pause", "PAUSED", round);
            assertStateRightAfter("pause?soft=true", "SOFT_PAUSED", round);
            assertStateRightAfter("resume", "EXPORTING", round);
        }
    }

    private static void assertStateRightAfter(final String action, final String state, final int round)
    {
        final HttpAnswer answer = cluster.client().management("POST", "/actuator/exporting/" + action, null);
        assertThat(answer.status()).as("round %d: %s: %s", round, action, answer).isEqualTo(200);
        final ExportingStatus status = cluster.client().exporting();
        assertThat(status.state()).as("round %d: the status right after %s: %s", round, action, status).isEqualTo(state);
        assertThat(status.targets()).as("round %d", round).hasSize(cluster.allPairs().size())
            .allSatisfy(pair -> assertThat(pair.state()).isEqualTo(state));
    }

    // ------------------------------------------------------------------------------------ typos in parameters

    @Test
    @Order(10)
    void aResetWithTheTypoDryrunIsRefusedAndChangesNothing()
    {
        assertRefusedChangingNothing(
            () -> cluster.client().management("POST", "/actuator/exporters/file/resetToLatestAndBackfill?backfillTaskCount=1&dryrun=true", null),
            400, "dryrun");
    }

    @Test
    @Order(11)
    void aPauseWithTheTypoSotfIsRefusedAndChangesNothing()
    {
        assertRefusedChangingNothing(
            () -> cluster.client().management("POST", "/actuator/exporting/pause?sotf=true", null), 400, "sotf");
    }

    @Test
    @Order(12)
    void aResumeWithAnyParameterIsRefusedAndChangesNothing()
    {
        cluster.client().management("POST", "/actuator/exporting/pause", null);
        assertRefusedChangingNothing(
            () -> cluster.client().management("POST", "/actuator/exporting/resume?soft=true", null), 400, "soft");
        assertThat(cluster.client().management("POST", "/actuator/exporting/resume", null).status()).isEqualTo(200);
    }

    @Test
    @Order(13)
    void aStatusWithAnUnknownParameterIsRefused()
    {
        assertRefusedChangingNothing(() -> cluster.client().get("/actuator/exporting?verbose=true"), 400, "verbose");
    }

    @Test
    @Order(14)
    void aRecordsPostWithAnUnknownParameterIsRefusedAndAppendsNothing()
    {
        assertRefusedChangingNothing(() -> clientRequest("POST", "/v1/records?sync=true", "{\"key\":\"k\",\"payload\":1}"),
            400, "sync");
    }

    @Test
    @Order(15)
    void aBackfillListWithAnUnknownParameterIsRefused()
    {
        assertRefusedChangingNothing(() -> cluster.client().get("/actuator/backfills?state=RUNNING"), 400, "state");
    }

    // ------------------------------------------------------------------------------------ typos in bodies

    @Test
    @Order(20)
    void aRecordWithAnUnknownFieldIsRefusedAndAppendsNothing()
    {
        assertRefusedChangingNothing(() -> cluster.client().postRecords("{\"key\":\"k\",\"payload\":1,\"partition\":3}"),
            400, "partition");
    }

    @Test
    @Order(21)
    void aTargetsBodyWithAnUnknownFieldIsRefusedAndPausesNothing()
    {
        assertRefusedChangingNothing(() -> cluster.client().management("POST", "/actuator/exporting/pause",
            "{\"targets\":[{\"brokerId\":0,\"partitionId\":1}],\"soft\":true}"), 400, "soft");
    }

    @Test
    @Order(22)
    void aTargetWithATypoIsRefusedAndPausesNothing()
    {
        assertRefusedChangingNothing(() -> cluster.client().management("POST", "/actuator/exporting/pause",
            "{\"targets\":[{\"brokerId\":0,\"partitonId\":1}]}"), 400, "partitonId");
    }

    // ------------------------------------------------------------------------------------ malformed requests

    @Test
    @Order(30)
    void aNulInThePathIsAJsonErrorOnBothPorts()
    {
        assertRefusedChangingNothing(() -> raw(client(), "POST /v1/rec%00ords HTTP/1.1\r\n", "{\"payload\":1}"), 400, "URI");
        assertRefusedChangingNothing(() -> raw(management(), "POST /actuator/exporting/pause%00 HTTP/1.1\r\n", ""), 400, "URI");
    }

    @Test
    @Order(31)
    void anEncodedSlashInThePathIsAJsonErrorOnBothPorts()
    {
        assertRefusedChangingNothing(() -> raw(client(), "POST /v1%2Frecords HTTP/1.1\r\n", "{\"payload\":1}"), 400, "slash");
        assertRefusedChangingNothing(() -> raw(management(), "POST /actuator/exporting%2Fpause HTTP/1.1\r\n", ""), 400, "slash");
    }

    @Test
    @Order(32)
    void aNulInAHeaderIsAJsonErrorOnBothPorts()
    {
        assertRefusedChangingNothing(() -> raw(client(), "POST /v1/records HTTP/1.1\r\nX-Trace: a\0b\r\n", "{\"payload\":1}"),
            400, "header");
        assertRefusedChangingNothing(() -> raw(management(), "POST /actuator/exporting/pause HTTP/1.1\r\nX-Trace: a\0b\r\n", ""),
            400, "header");
    }

    @Test
    @Order(33)
    void aTenKilobyteQueryStringIsAJsonErrorOnBothPorts()
    {
        final String query = "?q=" + "x".repeat(10 * 1024);
        assertRefusedChangingNothing(() -> raw(client(), "POST /v1/records" + query + " HTTP/1.1\r\n", "{\"payload\":1}"),
            400, "too large");
        assertRefusedChangingNothing(() -> raw(management(), "POST /actuator/exporting/pause" + query + " HTTP/1.1\r\n", ""),
            400, "too large");
    }

    @Test
    @Order(34)
    void anOversizeManagementBodyIsRefusedWith413AndPausesNothing()
    {
        final String body = "{\"targets\":[" + "{\"brokerId\":0,\"partitionId\":1},".repeat(40_000) + "{\"brokerId\":0,\"partitionId\":1}]}";
        assertRefusedChangingNothing(() -> cluster.client().management("POST", "/actuator/exporting/pause", body), 413, "maximum");
    }

    @Test
    @Order(35)
    void anOverlongUtf8SlashIsRefusedNotRewritten()
    {
        final byte[] body = bytes("{\"key\":\"k\",\"payload\":\"a", new byte[] {(byte)0xc0, (byte)0xaf}, "b\"}");
        assertRefusedChangingNothing(() -> raw(client(), "POST /v1/records HTTP/1.1\r\nContent-Type: application/json\r\n", body),
            400, "UTF-8");
    }

    @Test
    @Order(36)
    void aLoneSurrogateIsRefusedNotRewritten()
    {
        assertRefusedChangingNothing(() -> cluster.client().postRecords("{\"key\":\"k\",\"payload\":{\"t\":\"a\\ud800b\"}}"),
            400, "surrogate");
    }

    @Test
    @Order(37)
    void aNonAsciiIdempotencyKeyIsRefused()
    {
        final byte[] head = bytes("POST /v1/records HTTP/1.1\r\nIdempotency-Key: k", "é".getBytes(StandardCharsets.UTF_8), "y\r\n");
        assertRefusedChangingNothing(() -> raw(client(), new String(head, StandardCharsets.ISO_8859_1), "{\"payload\":1}"),
            400, "Idempotency-Key");
    }

    // ------------------------------------------------------------------------------------ helpers

    private static void assertRefusedChangingNothing(
        final java.util.function.Supplier<HttpAnswer> request, final int status, final String named)
    {
        final String before = snapshot();
        final HttpAnswer answer = request.get();
        assertThat(answer.status()).as("%s", answer).isEqualTo(status);
        final JsonNode json = Json.parse(answer.body());
        assertThat(json.isObject()).as("a JSON object: %s", answer.body()).isTrue();
        assertThat(json.path("error").isString()).as("error: %s", answer.body()).isTrue();
        assertThat(json.path("message").asString()).as("%s", answer.body()).containsIgnoringCase(named);
        assertThat(snapshot()).as("positions, backfills and exporting state after %s", answer).isEqualTo(before);
    }

    /** Every partition's settled last position, every backfill and every pair's exporting state, as one text. */
    private static String snapshot()
    {
        return Await.value("a settled view of positions, backfills and exporting state", SluiceCluster.scaled(Duration.ofSeconds(60)), () ->
        {
            final String first = view();
            Await.quietPeriod("the view settled: two reads 1.2 s apart must agree", Duration.ofMillis(1_200));
            final String second = view();
            return first != null && first.equals(second) ? Optional.of(first) : Optional.empty();
        });
    }

    private static String view()
    {
        final ExportingStatus status = cluster.client().exporting();
        final Map<String, String> pairs = new TreeMap<>();
        for (final PairState pair : status.targets())
        {
            if ("UNKNOWN".equals(pair.state()))
            {
                return null;
            }
            pairs.put(pair.pair().toString(), pair.state() + "@" + pair.lastPosition());
        }
        final HttpAnswer backfills = cluster.client().get("/actuator/backfills");
        return status.state() + " " + pairs + " backfills " + backfills.status() + " " + backfills.body();
    }

    private static HttpAnswer clientRequest(final String method, final String pathAndQuery, final String body)
    {
        return raw(client(), method + " " + pathAndQuery + " HTTP/1.1\r\nContent-Type: application/json\r\n", body);
    }

    private static URI client()
    {
        return cluster.client().clientBase();
    }

    private static URI management()
    {
        return cluster.client().managementBase();
    }

    private static HttpAnswer raw(final URI server, final String requestLineAndHeaders, final String body)
    {
        return raw(server, requestLineAndHeaders, body.getBytes(StandardCharsets.UTF_8));
    }

    /** One request written byte for byte (no client library fixes it up), answered on a fresh connection. */
    private static HttpAnswer raw(final URI server, final String requestLineAndHeaders, final byte[] body)
    {
        final long start = System.nanoTime();
        try (Socket socket = new Socket(server.getHost(), server.getPort()))
        {
            socket.setSoTimeout(30_000);
            final OutputStream out = socket.getOutputStream();
            out.write(requestLineAndHeaders.getBytes(StandardCharsets.ISO_8859_1));
            out.write(("Host: " + server.getHost() + "\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
            final InputStream in = socket.getInputStream();
            final ByteArrayOutputStream response = new ByteArrayOutputStream();
            in.transferTo(response);
            final String text = response.toString(StandardCharsets.UTF_8);
            final int status = Integer.parseInt(text.substring(9, 12));
            final int bodyStart = text.indexOf("\r\n\r\n");
            String payload = bodyStart < 0 ? "" : text.substring(bodyStart + 4);
            if (text.substring(0, Math.max(0, bodyStart)).toLowerCase().contains("transfer-encoding: chunked"))
            {
                payload = payload.substring(payload.indexOf("\r\n") + 2, payload.lastIndexOf("\r\n0\r\n"));
            }
            return new HttpAnswer(status, payload, Duration.ofNanos(System.nanoTime() - start));
        }
        catch (final IOException ex)
        {
            throw new AssertionError("raw request to " + server + " failed: " + ex, ex);
        }
    }

    private static byte[] bytes(final String head, final byte[] middle, final String tail)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(head.getBytes(StandardCharsets.UTF_8));
        out.writeBytes(middle);
        out.writeBytes(tail.getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }
}

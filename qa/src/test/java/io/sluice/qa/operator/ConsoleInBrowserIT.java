package io.sluice.qa.operator;

import io.sluice.qa.Exporting;
import io.sluice.qa.Records;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 28: the operations console at {@code /console} in Debian's headless Chromium (driven by Selenium through
 * its chromedriver) against a cluster of separate JVMs (3 brokers, 6 partitions, RF 3, a management token). Each
 * case acts as an operator would: clicks, reads what the page says, and checks the cluster did what the page said.
 * Screenshots go to {@code qa/target/console-screenshots/}. Skipped, with the reason, where no browser is installed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ConsoleInBrowserIT
{
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
    private static final String TOKEN = "qa-console-token";
    private static final Duration PAGE_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(30));
    private static final Duration STATE_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(90));
    /** For {@link #readAll}: an element's text rather than an attribute. */
    private static final String TEXT = "#text";

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private SluiceCluster cluster;
    private WebDriver browser;

    @BeforeAll
    void startClusterAndBrowser() throws IOException
    {
        Assumptions.assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
            "no headless browser here: install Debian's chromium and chromium-driver (.ci/run does) to run the console tests");
        Files.createDirectories(SCREENSHOTS);
        cluster = RUN.cluster("cluster", builder -> builder.token(TOKEN).requestTimeout(Duration.ofSeconds(3)));
        cluster.start();
        cluster.awaitReady();
        cluster.awaitPreferredLeaders();
        Exporting.everyBrokerUp(cluster);

        final ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--window-size=1400,1000", "--no-first-run", "--disable-extensions");
        final ChromeDriverService service = new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .withLogFile(RUN.directory().resolve("chromedriver.log").toFile())
            .build();
        browser = new ChromeDriver(service, options);
        browser.manage().timeouts().pageLoadTimeout(PAGE_TIMEOUT);
    }

    @AfterAll
    void stopBrowser()
    {
        if (browser != null)
        {
            browser.quit();
        }
    }

    /** Every case starts with every broker up and exporting, whatever the case before left. */
    @BeforeEach
    void everyBrokerUpAndExporting()
    {
        Exporting.everyBrokerUpAndExporting(cluster);
    }

    @AfterEach
    void closeDialogs()
    {
        if (browser != null)
        {
            browser.get("about:blank");
        }
    }

    @Test
    @Order(1)
    void withATokenSetAnActionWithoutItIsRefusedAndTheConsoleAsksForIt()
    {
        openConsole(null);
        click("action-pause");
        await("the pause dialog", d -> displayed("confirm-dialog"));
        assertThat(text("confirm-body")).contains("all 18 (broker, partition) pairs");
        click("confirm-ok");

        await("the token prompt", d -> displayed("token-dialog"));
        assertThat(text("token-reason")).contains("401").contains("Authorization: Bearer");
        screenshot("token-asked");
        assertThat(cluster.client().exporting().state()).as("nothing paused without the token").isEqualTo("EXPORTING");

        browser.findElement(By.id("token-input")).sendKeys(TOKEN);
        click("token-ok");
        await("the pause answered", d -> text("operation-title").startsWith("Pause: SUCCEEDED"));
        awaitGrid("PAUSED", 18);
        assertThat(cluster.client().exporting().state()).isEqualTo("PAUSED");
        assertThat((String) js("return sessionStorage.getItem('sluice.management.token')")).isEqualTo(TOKEN);
    }

    @Test
    @Order(2)
    void thePairGridShowsEveryPairsStateAfterAPauseFromTheCli()
    {
        final CliResult pause = AdminCliProcess.start(RUN.directory().resolve("cli"), "exporting", "pause",
            "--gateway", cluster.client().managementBase().toString(), "--token", TOKEN).awaitExit(AdminCliProcess.CALL_TIMEOUT);
        assertThat(pause.exitCode()).as("%s", pause).isEqualTo(0);

        openConsole(TOKEN);
        awaitGrid("PAUSED", 18);
        assertThat(text("exporting-state")).isEqualTo("PAUSED");
        // One read of the grid as the page holds it now: 36 WebDriver calls, one per attribute, outlast the console's
        // refresh on a busy machine and meet replaced cells on every try.
        final List<List<String>> cells = readAll("#pair-grid td.pair", "aria-label", "data-broker");
        assertThat(cells).hasSize(18);
        for (final List<String> cell : cells)
        {
            assertThat(cell.get(0)).contains("PAUSED").contains("broker " + cell.get(1));
        }
        screenshot("grid-paused");
    }

    @Test
    @Order(3)
    void aPauseFromTheConsoleWithABrokerStoppedShowsTheFailedPairsAndRetriesThemOnceItIsBack()
    {
        cluster.killBroker(2);
        openConsole(TOKEN);
        await("broker 2 unknown in the grid", d -> cellsIn("UNKNOWN") == 6);
        await("MIXED called out", d -> text("exporting-state").equals("MIXED"));
        assertThat(text("exporting-counts")).startsWith("MIXED: the pairs disagree.").contains("12 EXPORTING").contains("6 UNKNOWN");
        screenshot("grid-mixed");

        click("action-pause");
        await("the pause dialog", d -> displayed("confirm-dialog"));
        assertThat(text("confirm-body")).contains("6 pairs are on unreachable brokers (broker 2)");
        click("confirm-ok");
        await("the partial answer", d -> text("operation-title").startsWith("Pause: FAILED"));
        assertThat(readAll("#operation-failures tbody tr", "data-broker")).hasSize(6)
            .allSatisfy(broker -> assertThat(broker).containsExactly("2"));
        assertThat(text("retry-failed")).isEqualTo("Retry the 6 failed pairs");
        screenshot("pause-partial");

        cluster.startBroker(2);
        Exporting.everyBrokerUp(cluster);
        await("the retried pairs succeeded", d ->
        {
            if (!text("operation-title").startsWith("Pause: SUCCEEDED") && browser.findElement(By.id("retry-failed")).isEnabled())
            {
                click("retry-failed");
            }
            return text("operation-title").startsWith("Pause: SUCCEEDED");
        });
        assertThat(text("operation-summary")).startsWith("6 SUCCEEDED");
        awaitGrid("PAUSED", 18);
        screenshot("pause-retried");
        assertThat(cluster.client().exporting().state()).isEqualTo("PAUSED");
    }

    @Test
    @Order(4)
    void badInputGetsTheGatewaysJsonErrorInWordsAndChangesNothing()
    {
        openConsole(TOKEN);
        openResetDialog();
        final WebElement tasks = browser.findElement(By.id("reset-task-count"));
        tasks.clear();
        tasks.sendKeys("none");
        click("reset-dry-run");

        await("the refusal", d -> displayed("confirm-error"));
        assertThat(text("confirm-error"))
            .startsWith("The gateway refused this (400 Bad Request): ")
            .contains("backfillTaskCount");
        screenshot("bad-input");
        assertThat(cluster.client().get("/actuator/backfills").body()).contains("\"backfills\":[]");
    }

    @Test
    @Order(5)
    void aResetWithBackfillFromTheConsoleShowsTheDryRunPlanFirstThenTheTasksProgressToSucceeded()
    {
        Exporting.until200("pause", () -> cluster.client().pause());
        final List<WrittenRecord> lagging = Records.write(cluster, "console-lagging", 200);
        openConsole(TOKEN);
        holdTheDefaultPlanUntilThePlanOfThreeIsShown();
        openResetDialog();

        final WebElement tasks = browser.findElement(By.id("reset-task-count"));
        tasks.clear();
        tasks.sendKeys("3");
        click("reset-dry-run");
        await("the dry-run plan of 3 tasks", d -> displayed("reset-plan-table") && text("reset-plan").contains("3 backfill tasks"));
        await("the late answer to the default plan", d -> "answered".equals(js("return window.sluiceDefaultPlan || ''")));
        assertThat(text("reset-plan")).as("the plan asked for last, not a late answer to an earlier question")
            .contains("3 backfill tasks");
        assertThat(browser.findElements(By.cssSelector("#reset-plan-table tbody tr"))).hasSize(6);
        assertThat(text("reset-plan")).as("the plan, and nothing else").doesNotContain("null").doesNotContain("undefined");
        assertThat(browser.findElement(By.id("confirm-ok")).isEnabled()).as("confirm waits for the typed name").isFalse();
        assertThat(cluster.client().get("/actuator/backfills").body()).as("a dry run starts nothing").contains("\"backfills\":[]");
        screenshot("reset-plan");

        browser.findElement(By.id("confirm-typed-input")).sendKeys("file");
        await("confirm enabled", d -> browser.findElement(By.id("confirm-ok")).isEnabled());
        click("confirm-ok");
        await("the backfill's detail", d -> displayed("backfill-detail") && !browser.findElements(By.cssSelector("#backfill-tasks tbody tr")).isEmpty());
        // A task may take the ranges of several partitions: one row per partition, three task ids.
        assertThat(readAll("#backfill-tasks tbody tr td:first-child", TEXT).stream().distinct()).hasSize(3);
        screenshot("backfill-held");

        Exporting.until200("resume", () -> cluster.client().resume());
        await("the backfill SUCCEEDED", d -> "SUCCEEDED".equals(browser.findElement(By.id("backfill-detail")).getAttribute("data-state")));
        assertThat(text("backfill-detail-summary")).contains("(100%)");
        screenshot("backfill-succeeded");
        Records.awaitExported(cluster, lagging);
    }

    @Test
    @Order(6)
    void theGatewayServesTheRepositorysApiDescriptionOnBothPorts() throws Exception
    {
        final String kept = Files.readString(Path.of("..", "docs", "openapi.json"));
        final HttpClient http = HttpClient.newHttpClient();
        for (final URI base : List.of(cluster.client().clientBase(), cluster.client().managementBase()))
        {
            final HttpResponse<String> served = http.send(HttpRequest.newBuilder(base.resolve("/v3/api-docs"))
                .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(served.statusCode()).as("%s", base).isEqualTo(200);
            assertThat(served.body()).as("%s", base).isEqualTo(kept);
        }
    }

    private void openConsole(final String token)
    {
        browser.get(cluster.client().managementBase().resolve("/console").toString());
        js(token == null ? "sessionStorage.clear()" : "sessionStorage.setItem('sluice.management.token', arguments[0])", token);
        browser.navigate().refresh();
        await("the first picture", d -> !((String) js("return document.documentElement.dataset.firstRenderMs || ''")).isEmpty());
        final String firstRender = "console: first full picture " + js("return document.documentElement.dataset.firstRenderMs") +
            " ms after navigation";
        cluster.log(firstRender);
        System.out.println(firstRender);
    }

    /**
     * The reset dialog asks for the default plan as it opens; a busy gateway may answer that after the plan asked for
     * since. This page's fetch holds the default plan's answer back until the plan of 3 tasks is on screen, then
     * lets it through and, a quarter second after handing it over (the console has read it by then), says so in
     * {@code window.sluiceDefaultPlan}.
     */
    private void holdTheDefaultPlanUntilThePlanOfThreeIsShown()
    {
        js("""
            const send = window.fetch.bind(window);
            const shown = () => (document.getElementById('reset-plan') || {}).textContent?.includes('3 backfill tasks');
            const held = () => new Promise((go) => { const look = () => shown() ? go() : setTimeout(look, 50); look(); });
            window.fetch = (url, init) => {
              if (!String(url).includes('dryRun=true') || String(url).includes('backfillTaskCount')) return send(url, init);
              window.sluiceDefaultPlan = 'held';
              return held().then(() => send(url, init)).then((answer) => {
                setTimeout(() => { window.sluiceDefaultPlan = 'answered'; }, 250);
                return answer;
              });
            };
            """);
    }

    private void openResetDialog()
    {
        await("the file exporter's row", d -> !browser.findElements(By.cssSelector("button.reset[data-exporter='file']")).isEmpty());
        onCurrentPage(() ->
        {
            browser.findElement(By.cssSelector("button.reset[data-exporter='file']")).click();
            return null;
        });
        await("the reset dialog", d -> displayed("confirm-dialog") && displayed("confirm-typed"));
    }

    private void awaitGrid(final String state, final int pairs)
    {
        await(pairs + " pairs " + state + " in the grid", d -> cellsIn(state) == pairs);
    }

    private long cellsIn(final String state)
    {
        return browser.findElements(By.cssSelector("#pair-grid td.pair[data-state='" + state + "']")).size();
    }

    private void await(final String what, final Function<WebDriver, Boolean> condition)
    {
        try
        {
            new WebDriverWait(browser, STATE_TIMEOUT, Duration.ofMillis(200)).withMessage(what)
                .ignoring(StaleElementReferenceException.class).until(condition::apply);
        }
        catch (final RuntimeException e)
        {
            screenshot("failed-" + what.replaceAll("[^A-Za-z0-9]+", "-"));
            throw e;
        }
    }

    private boolean displayed(final String id)
    {
        return onCurrentPage(() ->
        {
            final List<WebElement> found = browser.findElements(By.id(id));
            return !found.isEmpty() && found.get(0).isDisplayed();
        });
    }

    private void click(final String id)
    {
        onCurrentPage(() ->
        {
            browser.findElement(By.id(id)).click();
            return null;
        });
    }

    private String text(final String id)
    {
        return onCurrentPage(() -> browser.findElement(By.id(id)).getText().strip());
    }

    /**
     * The console re-renders its views on every refresh, so an element found a moment ago may be replaced before it
     * is read or clicked (most often when another cluster keeps the machine busy and a step takes longer): find it
     * again, as an operator looks at the screen again, a few times.
     */
    private <T> T onCurrentPage(final Supplier<T> action)
    {
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                return action.get();
            }
            catch (final StaleElementReferenceException e)
            {
                if (attempt == 5)
                {
                    throw e;
                }
            }
        }
    }

    private Object js(final String script, final Object... args)
    {
        return ((JavascriptExecutor) browser).executeScript(script, args);
    }

    /**
     * The named attributes ({@link #TEXT}: the text) of every element {@code selector} matches, read in one script
     * call: the console redraws while WebDriver calls one by one would read, and they would meet replaced elements.
     */
    @SuppressWarnings("unchecked")
    private List<List<String>> readAll(final String selector, final String... attributes)
    {
        return (List<List<String>>) js("return Array.from(document.querySelectorAll(arguments[0]), element => " +
            "arguments[1].map(name => name === '" + TEXT + "' ? element.textContent.trim() : element.getAttribute(name)));",
            selector, List.of(attributes));
    }

    private void screenshot(final String name)
    {
        try
        {
            final File png = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
            Files.copy(png.toPath(), SCREENSHOTS.resolve(name + ".png"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }
}

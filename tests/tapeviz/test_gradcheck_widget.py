"""GradCheckWidget driven from Python: sliders recompute the check and the plots, wrong
gradients fail with their class in words, and every kind of custom gradient works."""

from __future__ import annotations

import time

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.core.check.mistakes import MISTAKES


def _tanh_x(x):
    return tv.tanh(x) * x


def _wrong_sign(dy, saved, attrs):
    (y,) = saved
    return {"x": lambda: tv.neg(dy * (1 - y * y))}


def _doubled(dy, saved, attrs):
    (y,) = saved
    return {"x": lambda: dy * (1 - y * y) * 2.0}


def test_a_correct_gradient_passes_and_the_plots_hold_the_reports_numbers():
    start = time.perf_counter()
    w = tv.GradCheckWidget(_tanh_x, [0.5])
    elapsed_ms = (time.perf_counter() - start) * 1e3
    assert w.error is None and w.passed
    assert "PASS" in w.badge.value and "matches" in w.failure_class
    numerical, analytic = w.plot_data["scatter"]
    np.testing.assert_allclose(analytic, w.check.analytic)
    np.testing.assert_allclose(numerical, w.check.numerical)
    t = np.tanh(0.5)
    np.testing.assert_allclose(analytic, [t + 0.5 * (1 - t * t)], rtol=1e-6)
    assert w.png()[:4] == b"\x89PNG"
    # the update's own time, in milliseconds: inside the constructor's, and what it says
    assert 0 < w.last_update_ms <= elapsed_ms
    assert w.timing.value == (
        f"<small>updated in {w.last_update_ms:.0f} ms \u00b7 0 slider positions coalesced</small>"
    )
    data = w.view.data  # what the browser draws: the same numbers
    np.testing.assert_allclose(data["scatter"]["analytic"], w.check.analytic.reshape(-1))
    np.testing.assert_allclose(data["scatter"]["numerical"], w.check.numerical.reshape(-1))
    assert data["scatter"]["passed"] == [True] and data["one_d"] and data["curve"]
    np.testing.assert_allclose(data["errors"]["abs_err"], w.check.abs_err.reshape(-1))
    np.testing.assert_allclose(data["sweep"]["eps"], w.sweep.eps)


def test_sliders_move_the_point_eps_and_range():
    w = tv.GradCheckWidget(_tanh_x, [0.5], x_range=(-2.0, 2.0))
    png, data = bytes(w.png()), w.view.data
    w.point.value = 1.25
    assert w.args[0].item() == pytest.approx(1.25)
    t = np.tanh(1.25)
    np.testing.assert_allclose(w.check.analytic, [t + 1.25 * (1 - t * t)], rtol=1e-6)
    assert w.view.data != data and w.view.data["curve"]["x_now"] == pytest.approx(1.25)
    assert bytes(w.png()) != png  # the static figure follows when asked for
    w.eps.value = 1e-2
    assert w.plot_data["eps"] == pytest.approx(1e-2) and w.report.eps == pytest.approx(1e-2)
    xs, fx, custom, numeric = w.plot_data["curve"]
    assert xs[0] == pytest.approx(-2.0) and xs[-1] == pytest.approx(2.0)
    np.testing.assert_allclose(fx, np.tanh(xs) * xs, rtol=1e-6)
    np.testing.assert_allclose(custom, np.tanh(xs) + xs * (1 - np.tanh(xs) ** 2), rtol=1e-6)
    assert np.abs(numeric - custom).max() < 1e-3  # eps = 1e-2: truncation error ~ eps^2
    w.range.value = (0.0, 1.0)
    assert w.plot_data["curve"][0][-1] == pytest.approx(1.0)


def test_the_eps_sweep_falls_with_slope_two():
    w = tv.GradCheckWidget(lambda x: tv.sum(tv.sin(x) * x), np.array([0.3, -0.7, 1.1]))
    eps, err = w.plot_data["sweep"]
    assert len(eps) == len(err) > 10
    assert 1.5 < w.sweep.slope_truncation < 2.5
    assert "healthy" in w.sweep.verdict and "eps sweep" in w.badge.value


def test_wrong_sign_and_constant_factor_are_named():
    with tv.gradient_override("Tanh", _wrong_sign):
        w = tv.GradCheckWidget(lambda x: tv.sum(tv.tanh(x)), np.array([0.1, 0.5, -0.9]))
    assert not w.passed and "FAIL" in w.badge.value
    assert w.failure_class == MISTAKES["sign"]
    with tv.gradient_override("Tanh", _doubled):
        w = tv.GradCheckWidget(lambda x: tv.sum(tv.tanh(x)), np.array([0.1, 0.5, -0.9]))
    assert w.failure_class == MISTAKES["factor"].format(k=2.0)
    assert w.worst.value.count("<tr>") == 4  # header + 3 entries, all outside
    assert "outside" in w.worst.value


def test_a_matrix_input_gets_a_heatmap_and_the_worst_entries():
    rng = np.random.default_rng(1)
    with tv.gradient_override("Tanh", _doubled):
        w = tv.GradCheckWidget(lambda a: tv.sum(tv.tanh(a) ** 2), rng.standard_normal((4, 5)))
        assert w.plot_data["abs_err"].shape == (4, 5)
        assert w.worst.value.count("<tr>") == 6  # header + 5 worst
        w.point.value = 0.5  # offset every entry; the check follows
        np.testing.assert_allclose(w.args[0], w.args0[0] + 0.5)
        assert not w.passed
    w.point.value = 0.0  # outside the override the built-in gradient is back
    assert w.passed


def test_custom_grad_and_differentiable_function():
    @tv.custom_grad
    def cube(x, save):
        save([x])
        return {"value": x * x * x, "grad_func": lambda dy, saved: dy * saved[0] * saved[0] * 3}

    assert tv.GradCheckWidget(lambda x: tv.sum(cube(x)), np.array([0.5, -2.0])).passed

    class Softsign(tv.DifferentiableFunction):
        def __init__(self):
            super().__init__(num_outputs=1, save_inputs_for_backward=True)

        def forward(self, x):
            return x / (1 + np.abs(x))

        def backward(self, dy, compute_gradients, x):
            return (dy / (1 + np.abs(x)) ** 2,)

    w = tv.GradCheckWidget(Softsign(), [0.7])
    assert w.passed and w.one_d and w.name == "Softsign"


def test_a_registered_kernel_gradient():
    tv.register_kernel("TestCubeWidget", "numpy", lambda inputs, attrs: inputs["x"] ** 3)
    try:
        tv.register_gradient(
            "TestCubeWidget",
            lambda dy, saved, attrs: {"x": lambda: dy * saved[0] * saved[0] * 3},
            inputs_to_save=("x",),
        )
        w = tv.GradCheckWidget(lambda x: tv.run_kernel("TestCubeWidget", {"x": x}), [0.4])
        assert w.passed
        tv.unregister_gradient("TestCubeWidget")
        tv.register_gradient(
            "TestCubeWidget",
            lambda dy, saved, attrs: {"x": lambda: dy * saved[0] * saved[0]},
            inputs_to_save=("x",),
        )
        w.point.value = 1.0  # the widget sees the new, wrong gradient on the next update
        assert not w.passed and "1/3" not in w.failure_class
        assert w.failure_class == MISTAKES["factor"].format(k=1 / 3)
    finally:
        tv.unregister_gradient("TestCubeWidget")
        tv.unregister_kernel("TestCubeWidget", "numpy")


def test_errors_are_shown_in_place():
    w = tv.GradCheckWidget(lambda x: x.not_an_op(), [1.0])
    assert w.error is not None and "role='alert'" in w.badge.value
    assert "not_an_op" in w.badge.value
    assert "role='alert'" in tv.GradCheckWidget(_tanh_x).badge.value  # no argument

    def fails_above_one(x):
        if float(x.numpy().reshape(-1)[0]) > 1.0:
            raise ValueError("domain: x must be <= 1")
        return tv.tanh(x)

    w = tv.GradCheckWidget(fails_above_one, [0.5])
    assert w.passed
    w.point.value = 2.0
    assert w.error is not None and "domain" in w.badge.value
    w.point.value = 0.2  # moving back recovers
    assert w.error is None and w.passed


def test_static_mimebundle():
    bundle = tv.GradCheckWidget(_tanh_x, [0.5])._repr_mimebundle_()
    assert "data:image/png;base64," in bundle["text/html"] and "PASS" in bundle["text/html"]
    assert bundle["text/plain"].endswith("PASS")


def _softsign(x):
    return x / (1.0 + np.abs(x))


def test_a_compiled_layer_with_right_and_wrong_gradients():
    def right(x, dy):
        return dy / (1.0 + np.abs(x)) ** 2

    def wrong(x, dy):
        return dy / (1.0 + np.abs(x))

    good = tv.GradCheckWidget(tv.CompiledLayer(_softsign, gradient=right), [0.7])
    assert good.passed and good.one_d
    xs, _, custom, numeric = good.plot_data["curve"]
    np.testing.assert_allclose(custom, 1 / (1 + np.abs(xs)) ** 2, rtol=1e-5)
    bad = tv.GradCheckWidget(tv.CompiledLayer(_softsign, gradient=wrong), np.array([0.3, -1.2]))
    assert not bad.passed and "value mismatch" in bad.failure_class


def _softsign_wrong(x):
    @tv.custom_grad
    def softsign(x, save):
        save([x])
        return {"value": x / (1 + tv.abs(x)), "grad_func": lambda dy, s: dy / (1 + tv.abs(s[0]))}

    return softsign(x)


def test_legends_sit_below_the_plots_and_labels_do_not_pile_up():
    w = tv.GradCheckWidget(_softsign_wrong, np.linspace(-3, 3, 7))
    assert not w.passed
    fig = w.figure()
    fig.canvas.draw()
    renderer, axes = fig.canvas.get_renderer(), fig.axes
    for ax in axes[:3]:  # scatter, error bars, eps sweep: no legend over the data
        legend, box = ax.get_legend(), ax.get_window_extent(renderer)
        assert legend is not None and legend.get_window_extent(renderer).y1 < box.y0
    bars = axes[1]
    assert len(bars.texts) == 1  # 7 bars: only the worst is labelled
    assert bars.texts[0].get_text() == f"{w.check.abs_err.max():.1e}"


def test_slope_fit_reads_no_fit_instead_of_nan():
    from tapeviz.widgets.gradcheck.plots import fit_text

    assert fit_text(float("nan")) == "no fit"
    assert fit_text(1.94) == "fit 1.9" and fit_text(-0.04) == "fit 0.0"


def test_slider_positions_from_the_browser_are_coalesced():
    import asyncio
    import concurrent.futures

    w = tv.GradCheckWidget(_tanh_x, [0.5])
    calls = []
    update = w.update
    w._live.update = lambda **kw: (calls.append(kw), update(**kw))

    async def drag():  # as the kernel receives them: each change under the property lock
        for v in (0.6, 0.7, 0.8, 0.9):
            with w.point._lock_property(value=v):
                w.point.value = v
        assert calls == []  # nothing computed while positions are still arriving
        await asyncio.sleep(0)

    # a thread of its own: a session-wide playwright (the browser tests) leaves its event loop
    # marked running in the main thread, where asyncio.run refuses to start another
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, drag()).result()
    assert len(calls) == 1 and w.coalesced == 3  # one update, for the latest position
    assert w.view.data["curve"]["x_now"] == pytest.approx(0.9)
    w.point.value = 0.1  # from Python: at once
    assert len(calls) == 2 and w.view.data["curve"]["x_now"] == pytest.approx(0.1)


def test_in_a_kernel_the_positions_around_the_sliders_are_checked_ahead():
    import asyncio
    import concurrent.futures

    w = tv.GradCheckWidget(_tanh_x, [0.5], x_range=(-1.0, 1.0))
    sent = []
    w.view.send = lambda content, buffers=None: sent.append(content)

    async def kernel():  # the update runs inside the kernel's event loop, as a slider's does
        w.point.value = 0.6
        await asyncio.sleep(0.1)
        assert sent == []  # no view shown: nothing is checked ahead
        w._on_view_message(w.view, {"hello": True}, [])  # a view, painted
        for _ in range(150):
            await asyncio.sleep(0.02)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # see the coalescing test
        pool.submit(asyncio.run, kernel()).result()
    frames = {(i, j): f for m in sent for i, j, f in m["frames"]}
    assert len(frames) > 50
    curves = {j: c for m in sent for j, c in m["curves"].items()}
    g, (i0, j0) = w.grid(), w._index()
    assert {(i0 + 1, j0), (i0 - 1, j0), (i0, j0 + 1), (i0, j0 - 1)} <= set(frames)
    wide = curves[str(j0)]  # f over the whole range slider: any range is cut out of it
    assert wide["x"][0] == pytest.approx(w.range.min) and wide["x"][-1] == pytest.approx(
        w.range.max
    )
    ahead = frames[(i0 + 1, j0)]
    w.point.value = g.point(i0 + 1)  # the kernel's own check there
    assert ahead["scatter"] == w.view.data["scatter"] and ahead["badge"] == w.view.data["badge"]
    assert ahead["worst"] == w.view.data["worst"] and ahead["sweep"] == w.view.data["sweep"]
    assert w.view.data["at"]["point"] == pytest.approx(0.61)
    assert [link.target[1] for link in w._links] == ["point", "eps", "range"]

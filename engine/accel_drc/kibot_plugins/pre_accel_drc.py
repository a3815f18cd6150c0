# accel-drc's KiBot preflight `accel_drc` (Apache-2.0, part of accel-drc).
# Installed into ~/.config/kibot/plugins by `accel-drc kibot install`; KiBot imports it as
# kibot.pre_accel_drc with its macros.  The work is done by accel_drc.kibot_plugin.
# No module docstring: KiBot reads a plug-in's docstring as YAML dependency data.
#
#   preflight:
#     accel_drc: true                 # or a dict: config_file, board_class, format, ...
#
# Fails the KiBot run with exit 5 (DRC_ERROR, as KiBot's own `drc`) on an unwaived error
# violation, 14 on a crashed check, 7 (EXIT_BAD_CONFIG) on a board or config accel-drc cannot
# read or a bad option.
import os

from accel_drc import kibot_plugin as _ad
from accel_drc.errors import AccelDrcError

from kibot.error import KiPlotConfigurationError, PlotError
from kibot.gs import GS
from kibot.kiplot import load_board
from kibot.log import get_logger
from kibot.misc import DRC_ERROR
from kibot.optionable import Optionable

# mcpyrate's macro import: `macros` first, absolute (the file is not in a package)
from kibot.macros import macros, document, pre_class  # noqa: F401

logger = get_logger(__name__)


class AccelDrcOptions(Optionable):
    """accel-drc options"""

    def __init__(self):
        with document:
            self.enabled = True
            """ Enable the check. This is the replacement for the boolean value """
            self.config_file = ""
            """ accel-drc project config (`accel-drc.yaml`), relative to the current directory.
                Empty: the `accel-drc.yaml` beside the board, if there is one """
            self.board_class = "auto"
            """ [auto,training,inference,edge] Board class. *auto*: the config's `class:`, else the
                one accel-drc's classifier finds """
            self.format = Optionable
            """ [string|list(string)='HTML'] [HTML,JSON,SARIF,MARKDOWN,JUNIT] {comma_sep} Reports to
                write, besides the summary in the log """
            self.output = GS.def_global_output
            """ *Name for the reports (%i=accel_drc %x=according to format) """
            self.dir = ""
            """ Sub-directory for the reports """
            self.dont_stop = False
            """ Continue even if the board fails the check (the failure is still logged) """
            self.fail_on_unverified = False
            """ Also fail when an error-severity rule could not be checked (verdict NOT VERIFIED:
                the board does not declare what the rule needs) """
        super().__init__()
        self._unknown_is_error = True

    def config(self, parent):
        super().config(parent)
        try:
            self.format = _ad.formats(self.format) or ["HTML"]
        except AccelDrcError as exc:
            raise KiPlotConfigurationError(_ad.message(exc)) from None


@pre_class
class Accel_DRC(BasePreFlight):
    """accel-drc
    Checks the PCB with accel-drc, the design-rule checker for AI-accelerator boards
    (laminate loss, foil, via stubs, PDN, Tg, impedance), and stops the run on a violation.
    Needs the `accel-drc` Python package (`pip install accel-drc`)"""

    def __init__(self):
        super().__init__()
        self._pcb_related = True
        self._expand_id = _ad.KIBOT_ID
        self._category = "PCB/docs"
        with document:
            self.accel_drc = AccelDrcOptions
            """ [boolean|dict=false] Use a boolean for simple cases or fine-tune its behavior """

    def __str__(self):
        return f"{self.type}: {self._enabled}"

    def config(self, parent):
        super().config(parent)
        ops = self.accel_drc
        if isinstance(ops, bool):
            new_ops = AccelDrcOptions()
            new_ops.config(self)  # the defaults
            new_ops.enabled = ops
            ops = new_ops
        self._ops = ops
        self._enabled = ops.enabled

    def get_targets(self):
        """The report files this preflight writes."""
        load_board()  # the %-expansions of `output` read the board's title block
        out_dir = self.expand_dirname(GS.out_dir)
        if GS.global_dir and GS.global_use_dir_for_preflights:
            out_dir = os.path.join(out_dir, self.expand_dirname(GS.global_dir))
        names = []
        for name in self._ops.format:
            self._expand_ext = _ad.FORMATS[name][1]
            base = Optionable.expand_filename_both(self, self._ops.output, is_sch=False)
            names.append(os.path.abspath(os.path.join(out_dir, self._ops.dir, base)))
        return names

    def run(self):
        ops = self._ops
        board_class = None if ops.board_class == "auto" else ops.board_class
        reports = dict(zip(ops.format, self.get_targets()))
        logger.info("- Running accel-drc")
        try:
            result = _ad.run(GS.pcb_file, ops.config_file or None, board_class, reports)
        except AccelDrcError as exc:  # a board or config accel-drc cannot read
            raise KiPlotConfigurationError(_ad.message(exc)) from None
        logger.info(_ad.summary(result))
        why = _ad.failure(result, ops.fail_on_unverified)
        if why is None:
            return
        if ops.dont_stop:
            logger.error(why)
            return
        if _ad.crashed_rules(result) and not result.unwaived_errors():
            raise PlotError(why)
        GS.exit_with_error(why, DRC_ERROR)

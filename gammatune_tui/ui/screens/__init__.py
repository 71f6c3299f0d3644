"""The screens GammaTuneApp can be given (chat, replay, compare) and the help screen."""
